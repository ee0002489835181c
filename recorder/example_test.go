package recorder_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder"
)

func ExampleDUE() {
	d := recorder.NewDUE(0)
	fmt.Println(d.Add(42), d.Add(42), d.Len())
	// Output: true false 1
}
