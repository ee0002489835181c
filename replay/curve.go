package replay

import (
	"fmt"
	"slices"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// Curve is a miss-rate curve: hit counts at a list of cache sizes, from one
// pass over a trace.
type Curve struct {
	// Sizes are the cache sizes, ascending and distinct.
	Sizes []int
	// Requests is the number of counted requests (after the warmup).
	Requests int64
	// Hits[i] is the number of counted hits at Sizes[i].
	Hits []int64
	// Distinct is the number of distinct keys in the whole trace.
	Distinct int64
}

// Misses is the number of counted misses at Sizes[i].
func (c Curve) Misses(i int) int64 { return c.Requests - c.Hits[i] }

// MissRate is the miss rate at Sizes[i] (0 for an empty trace).
func (c Curve) MissRate(i int) float64 {
	if c.Requests == 0 {
		return 0
	}
	return float64(c.Misses(i)) / float64(c.Requests)
}

// distHist counts stack distances into buckets delimited by a sorted list of
// sizes: bucket i holds distances in (sizes[i-1], sizes[i]]. Distances above
// the largest size and cold misses are not recorded (they miss everywhere).
type distHist struct {
	sizes    []int
	counts   []int64
	requests int64
	warmup   int64
	t        int64 // requests seen, counted or not
}

func newDistHist(sizes []int, warmup int64) (*distHist, error) {
	s, err := checkSizes(sizes)
	if err != nil {
		return nil, err
	}
	return &distHist{sizes: s, counts: make([]int64, len(s)), warmup: warmup}, nil
}

// checkSizes returns sizes sorted and deduplicated, or an error for an empty
// list or a size < 1.
// CheckSizes returns sizes sorted and without repeats, or an error
// wrapping [tracefile.ErrBadInput] when one is below 1 or above
// [policy.MaxSize], before any trace is read.
func CheckSizes(sizes []int) ([]int, error) {
	s, err := checkSizes(sizes)
	if err == nil && s[len(s)-1] > policy.MaxSize {
		err = fmt.Errorf("replay: cache size %d is above the largest a cache can be, %d (2^30 - 1): give sizes up to 2^29", s[len(s)-1], policy.MaxSize)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", tracefile.ErrBadInput, err)
	}
	return s, nil
}

func checkSizes(sizes []int) ([]int, error) {
	if len(sizes) == 0 {
		return nil, fmt.Errorf("replay: no cache sizes")
	}
	s := slices.Clone(sizes)
	slices.Sort(s)
	s = slices.Compact(s)
	if s[0] < 1 {
		return nil, fmt.Errorf("replay: cache size %d < 1", s[0])
	}
	return s, nil
}

// add records one request with stack distance d (1-based; 0 = cold miss).
func (h *distHist) add(d int64) {
	h.t++
	if h.t <= h.warmup {
		return
	}
	h.requests++
	if d <= 0 || d > int64(h.sizes[len(h.sizes)-1]) {
		return
	}
	// Smallest i with sizes[i] >= d; few sizes, so a binary search.
	lo, hi := 0, len(h.sizes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int64(h.sizes[m]) < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	h.counts[lo]++
}

func (h *distHist) curve(distinct int64) Curve {
	c := Curve{Sizes: slices.Clone(h.sizes), Requests: h.requests, Hits: make([]int64, len(h.sizes)), Distinct: distinct}
	var sum int64
	for i, n := range h.counts {
		sum += n
		c.Hits[i] = sum
	}
	return c
}
