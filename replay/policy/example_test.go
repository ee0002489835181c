package policy_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/replay/policy"
)

func Example() {
	// The classic exercise: 20 page references, 3 frames.
	trace := []uint64{7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1}
	for _, name := range []string{"min", "lru", "clock", "fifo"} {
		p, err := policy.New(name, 3, policy.Options{Trace: trace})
		if err != nil {
			panic(err)
		}
		misses := 0
		for _, key := range trace {
			if !p.Access(key) {
				misses++
			}
		}
		fmt.Printf("%-5s %2d misses, %d cached\n", p.Name(), misses, p.Len())
	}
	// Output:
	// min    9 misses, 3 cached
	// lru   12 misses, 3 cached
	// clock 11 misses, 3 cached
	// fifo  15 misses, 3 cached
}
