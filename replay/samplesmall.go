package replay

import (
	"path/filepath"
	"runtime"
	"slices"
	"sync"
)

// Exact rows below a sample's resolution.
//
// A sample at rate R simulates a cache of size keys at 1 + (size-1) R
// keys; below size 1/R that is one key (or two), and the estimate is
// wrong by whatever separates a one-key cache from the full one: on a
// 5M-request Zipf trace at R = 0.01, up to 0.35 of miss rate. Those
// caches are small, so a fixed-rate sampled run computes LRU's and
// CLOCK's exactly instead, on every request of the trace, in the pass
// prepareSample makes anyway: LRU's with one move-to-front list as deep as
// the largest of them (fewer than 1/R keys, scanned in cache) that counts
// the hits at each depth, CLOCK's with a ring per size found by a scan
// too. Memory is bounded by the small sizes' sum, whatever the trace, and
// the cost per request by that sum too (a scan per cache): about 100 ns
// at R = 0.01 (7 sizes, 2^0..2^6), run beside the pass on a second core.
// Their rows are the exact run's rows (SampleRate 0). Only sizes up to
// smallExactMax are computed; a sample below 1/64 writes no row between
// that and 1/R.
//
// The other policies write no row below 1/R: MIN and STATIC need the
// whole trace (next uses, popularity counts), which a streamed pass does
// not hold, and running every other policy at every small size on the
// whole trace would cost a hashed cache per policy, size and request
// (about 30 ns each: 2 us a request for ten policies at 7 sizes).
// INFINITE has no size; its row stays the sample's estimate.
// Config.SampleOmitSmall writes no row below 1/R for lru and clock either,
// and spares the pass their cost.
//
// With SampleMaxKeys the rate is only known at the end of the pass (it
// falls as keys arrive), so those runs keep the sampled rows at every
// size.

// smallExact runs the exact LRU and CLOCK caches of the sizes below a
// sample's resolution. It is not safe for concurrent use.
type smallExact struct {
	sizes []int        // ascending: the sizes below 1/R
	exact []int        // the first of sizes, those up to smallExactMax
	lru   *tinyLRU     // nil when lru is not replayed
	clock []*tinyCLOCK // one per exact size when clock is replayed
	// beside is the clocks access feeds on a goroutine of its own, beside
	// the lru and the other clocks (none on one CPU).
	beside []*tinyCLOCK
}

// smallExactMax is the largest size below 1/R computed exactly. A scan
// costs about a nanosecond a key, on every request of the trace: at
// R = 0.01 the sizes 2^0..2^6 cost about 100 ns a request, while at
// R = 0.001 computing 2^7..2^9 too took 545 ns a request (a sampled run
// of a 20M-request trace slower than the exact one). The sizes between
// smallExactMax and 1/R write no row.
const smallExactMax = 64

// smallSizes returns the sizes below the resolution 1/rate of a sample,
// ascending: those whose miniature, 1 + (size-1) rate keys, holds less
// than two keys.
func smallSizes(sizes []int, rate float64) []int {
	var s []int
	for _, v := range sizes {
		if float64(v)*rate < 1 {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// newSmallExact returns the exact caches of lru and clock, among policies,
// at sizes (those up to smallExactMax): none unless exact.
func newSmallExact(sizes []int, policies []string, exact bool) *smallExact {
	se := &smallExact{sizes: sizes}
	if exact {
		for _, s := range sizes {
			if s <= smallExactMax {
				se.exact = append(se.exact, s)
			}
		}
	}
	if len(se.exact) == 0 {
		return se
	}
	for _, name := range policies {
		switch name {
		case "lru":
			se.lru = newTinyLRU(se.exact[len(se.exact)-1])
		case "clock":
			for _, size := range se.exact {
				se.clock = append(se.clock, newTinyCLOCK(size))
			}
		}
	}
	if runtime.GOMAXPROCS(0) > 1 {
		se.split()
	}
	return se
}

// split chooses the clocks fed beside the rest: a cache costs about its
// size a request (a scan of its keys; the lru's, its depth), so the
// largest clocks go beside until they cost as much as what stays. At
// R = 0.01 (lru and clock at 2^0..2^6) the one goroutine that fed them
// all took 1.9 s of a 20M-request trace, the sampled run 1.9-2.0 s wall
// against 9.0-9.6 s exact: so the exact caches, not the sample, bound it.
func (se *smallExact) split() {
	home, away := 0, 0
	if se.lru != nil {
		home = se.lru.depth
	}
	for _, c := range slices.Backward(se.clock) {
		if away < home {
			away += len(c.keys)
			se.beside = append(se.beside, c)
		} else {
			home += len(c.keys)
		}
	}
	if len(se.beside) == len(se.clock) && se.lru == nil {
		se.beside = nil // nothing left to run beside them
	}
}

// busy reports whether se has caches to feed.
func (se *smallExact) busy() bool { return se.lru != nil || len(se.clock) > 0 }

// access feeds a batch of the whole trace to every exact cache: the
// clocks of beside on another goroutine, the rest on this one.
func (se *smallExact) access(keys []uint64) {
	var wg sync.WaitGroup
	if len(se.beside) > 0 {
		wg.Go(func() {
			for _, c := range se.beside {
				c.accessAll(keys)
			}
		})
	}
	if se.lru != nil {
		for _, k := range keys {
			se.lru.access(k)
		}
	}
	for _, c := range se.clock {
		if !slices.Contains(se.beside, c) {
			c.accessAll(keys)
		}
	}
	wg.Wait()
}

// has reports whether size is below the sample's resolution.
func (se *smallExact) has(size int) bool {
	if se == nil {
		return false
	}
	_, ok := slices.BinarySearch(se.sizes, size)
	return ok
}

// rows returns the exact rows of policy name at the small sizes among
// sizes (the rows an exact run writes), reqs being the trace's requests;
// none for a policy se does not run.
func (se *smallExact) rows(path, name string, sizes []int, reqs int64) []Row {
	trace := filepath.Base(path)
	var rows []Row
	for _, s := range sizes {
		j, ok := slices.BinarySearch(se.exact, s)
		switch {
		case !ok:
		case name == "lru" && se.lru != nil:
			rows = append(rows, fixedRow(trace, name, s, reqs, []int64{se.lru.hitsAt(s)}))
		case name == "clock" && len(se.clock) > 0:
			rows = append(rows, fixedRow(trace, name, s, reqs, []int64{se.clock[j].hits}))
		}
	}
	return rows
}

// tinyFilter counts the keys of a small cache by 256 buckets of their
// hash: a key whose bucket is empty is absent, without a scan (with 64
// keys cached, about 4 in 5 absent keys are told so).
type tinyFilter [256]uint8

func tinyBucket(key uint64) uint8 { return uint8((key * 0x9E3779B97F4A7C15) >> 56) }

// tinyLRU is an LRU stack of a few keys, most recent first, on a ring
// found by a linear scan: at fewer than 1/R keys (100 at R = 0.01) the
// scan stays in a few cache lines, where [LRUMarkers]' hash index costs
// more, and a key absent from the stack (most requests, at these sizes)
// costs a look at its filter bucket and one store. hits[d] counts the
// requests found at depth d+1; a cache of size s hits those at depths <= s
// (LRU is a stack algorithm). It is not safe for concurrent use.
type tinyLRU struct {
	ring   []uint64 // a power of two >= depth slots
	head   int      // the most recent key's slot
	n      int      // keys held, <= depth
	depth  int
	hits   []int64
	filter tinyFilter
}

func newTinyLRU(depth int) *tinyLRU {
	p := 1
	for p < depth {
		p *= 2
	}
	return &tinyLRU{ring: make([]uint64, p), depth: depth, hits: make([]int64, depth)}
}

func (s *tinyLRU) access(key uint64) {
	mask := len(s.ring) - 1
	b := tinyBucket(key)
	if s.filter[b] > 0 {
		for i := range s.n {
			if s.ring[(s.head+i)&mask] != key {
				continue
			}
			s.hits[i]++
			for j := i; j > 0; j-- {
				s.ring[(s.head+j)&mask] = s.ring[(s.head+j-1)&mask]
			}
			s.ring[s.head] = key
			return
		}
	}
	if s.n == s.depth {
		s.filter[tinyBucket(s.ring[(s.head+s.n-1)&mask])]--
	} else {
		s.n++
	}
	s.head = (s.head - 1) & mask
	s.ring[s.head] = key
	s.filter[b]++
}

// hitsAt returns the hits of an LRU cache of size keys (at most the depth).
func (s *tinyLRU) hitsAt(size int) int64 {
	var h int64
	for _, v := range s.hits[:size] {
		h += v
	}
	return h
}

// tinyCLOCK is [policy.CLOCK] for a few keys: the same ring of slots, marks
// and hand, and the same choices (a new key unmarked, the hand past it
// after a replacement), with the key found by a linear scan of the slots
// (after a look at its filter bucket) rather than a hash table. It is not
// safe for concurrent use.
type tinyCLOCK struct {
	keys   []uint64 // the ring: len is the size
	marks  []bool
	n      int // slots filled
	hand   int
	hits   int64
	filter tinyFilter
}

func newTinyCLOCK(size int) *tinyCLOCK {
	return &tinyCLOCK{keys: make([]uint64, size), marks: make([]bool, size)}
}

// accessAll accesses keys in order, counting the hits.
func (c *tinyCLOCK) accessAll(keys []uint64) {
	for _, k := range keys {
		if c.access(k) {
			c.hits++
		}
	}
}

func (c *tinyCLOCK) access(key uint64) bool {
	b := tinyBucket(key)
	if c.filter[b] > 0 {
		for i, k := range c.keys[:c.n] {
			if k == key {
				c.marks[i] = true
				return true
			}
		}
	}
	c.filter[b]++
	if c.n < len(c.keys) {
		c.keys[c.n] = key
		c.n++
		return false
	}
	h := c.hand
	for c.marks[h] {
		c.marks[h] = false
		if h++; h == len(c.keys) {
			h = 0
		}
	}
	c.filter[tinyBucket(c.keys[h])]--
	c.keys[h] = key
	if h++; h == len(c.keys) {
		h = 0
	}
	c.hand = h
	return false
}
