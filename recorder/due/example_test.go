package due_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder/due"
)

// A fingerprint is admitted once: the second Add of 42 reports it known.
func ExampleMemory() {
	d := due.NewMemory(0)
	fmt.Println(d.Add(42), d.Add(42), d.Len())
	// Output: true false 1
}
