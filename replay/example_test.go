package replay_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/replay"
)

// Exact LRU and MIN miss counts for sizes 1..3 from one pass each.
func Example() {
	trace := []uint64{1, 2, 3, 1, 2, 4, 1, 2, 3, 4}
	sizes := []int{1, 2, 3}
	lru, _ := replay.LRUCurve(replay.NewSliceSource(trace), sizes, 0)
	min, _ := replay.MINCurve(trace, nil, sizes, 0)
	for i, k := range sizes {
		fmt.Printf("size %d: LRU %d misses, MIN %d misses\n", k, lru.Misses(i), min.Misses(i))
	}
	// Output:
	// size 1: LRU 10 misses, MIN 10 misses
	// size 2: LRU 10 misses, MIN 7 misses
	// size 3: LRU 6 misses, MIN 5 misses
}

func ExampleParseSizes() {
	s, _ := replay.ParseSizes("2^0..2^4,1k,64k")
	fmt.Println(s)
	// Output:
	// [1 2 4 8 16 1024 65536]
}
