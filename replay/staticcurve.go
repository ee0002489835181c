package replay

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// StaticCurve computes exact hit counts of the paper's STATIC
// ([policy.Static]) at a list of cache sizes in one streaming pass. STATIC
// at size k holds the k keys most requested over the whole trace (ties
// broken by earliest first request), so the caches at all sizes are
// prefixes of one ranking: one count of every key's requests and one sort
// give every size's hits as a prefix sum, where a run per size counts and
// sorts the trace again for each size.
//
// The first warmup requests are not counted but rank the keys, as they do
// for policy.Static, which ranks by the whole trace. A key in the size-k
// cache hits on each of its counted requests; with charge
// (Options.ChargeStaticLoads) its first request is a miss, so a key first
// requested after the warmup hits on all of its counted requests but one.
//
// Memory: a hash table of the distinct keys and, per distinct key, 8 bytes
// of count, 8 more for the keys first requested in the warmup, and 8 for
// the ranking (built by Curve). Nothing per request. It is not safe for
// concurrent use.
type StaticCurve struct {
	sizes  []int
	warmup int64
	charge bool
	idx    *policy.Index
	counts []int64 // requests of each key, keys numbered by first request
	warm   []int64 // requests in the warmup of keys 0..len(warm)-1, those first requested in it
	seen   int64   // requests seen, counted or not
}

// NewStaticCurve returns a StaticCurve for sizes (any order; duplicates
// are dropped; sizes must be in 1..policy.MaxSize, as policy.Static's). The
// first warmup requests rank the keys but are not counted; charge counts
// the first request of each cached key as a miss.
func NewStaticCurve(sizes []int, warmup int64, charge bool) (*StaticCurve, error) {
	s := slices.Clone(sizes)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 || s[0] < 1 || s[len(s)-1] > policy.MaxSize {
		return nil, fmt.Errorf("replay: STATIC curve: sizes must be in 1..%d, got %v", policy.MaxSize, sizes)
	}
	// The index starts small and doubles with the distinct keys.
	return &StaticCurve{sizes: s, warmup: warmup, charge: charge, idx: policy.NewIndex(1 << 12)}, nil
}

// Access counts one request.
func (s *StaticCurve) Access(key uint64) {
	s.seen++
	inWarmup := s.seen <= s.warmup
	i, ok := s.idx.Get(key)
	if !ok {
		i = len(s.counts)
		s.idx.Put(key, i)
		s.counts = append(s.counts, 0)
		if inWarmup {
			s.warm = append(s.warm, 0)
		}
	}
	s.counts[i]++
	if inWarmup {
		s.warm[i]++
	}
}

// AccessBatch counts keys in order.
func (s *StaticCurve) AccessBatch(keys []uint64) {
	for _, k := range keys {
		s.Access(k)
	}
}

// Curve ranks the keys counted so far and returns the hit counts at the
// sizes; Distinct is the number of distinct keys. It can be called again
// after more requests.
func (s *StaticCurve) Curve() Curve {
	c := Curve{Sizes: slices.Clone(s.sizes), Requests: max(s.seen-s.warmup, 0), Hits: make([]int64, len(s.sizes)), Distinct: int64(len(s.counts))}
	var sum int64
	j := 0
	for r, i := range staticRank(s.counts, true) {
		// The caches of size <= r hold the keys ranked above this one.
		for ; j < len(s.sizes) && s.sizes[j] <= r; j++ {
			c.Hits[j] = sum
		}
		if j == len(s.sizes) {
			break
		}
		h := s.counts[i]
		if i < uint64(len(s.warm)) {
			h -= s.warm[i] // first requested in the warmup: its counted requests hit
		} else if s.charge {
			h-- // first requested after it: that request loads the key
		}
		sum += h
	}
	for ; j < len(s.sizes); j++ {
		c.Hits[j] = sum
	}
	return c
}

// staticRank returns the key numbers 0..len(counts)-1 in STATIC's order
// (policy.NewStatic's): most requests first, ties by the lower number (the
// earlier first request). With pack it sorts the keys as integers holding
// the complemented count above the number, which sorts several times faster
// than a comparison function, whenever both fit in 64 bits (they do unless
// a key is requested some 2^34 times); otherwise, or without pack, it
// sorts the numbers by comparing counts.
func staticRank(counts []int64, pack bool) []uint64 {
	n := len(counts)
	order := make([]uint64, n)
	if n == 0 {
		return order
	}
	nb := bits.Len(uint(n - 1)) // bits of the largest number
	cb := bits.Len64(uint64(slices.Max(counts)))
	if pack && nb+cb <= 64 && cb < 64 {
		top := uint64(1)<<cb - 1 // >= every count
		for i, c := range counts {
			order[i] = (top-uint64(c))<<nb | uint64(i)
		}
		slices.Sort(order)
		mask := uint64(1)<<nb - 1
		for i := range order {
			order[i] &= mask
		}
		return order
	}
	for i := range order {
		order[i] = uint64(i)
	}
	slices.SortFunc(order, func(a, b uint64) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order
}
