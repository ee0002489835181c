package replay

import (
	"fmt"
	"slices"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// LRUMarkers computes exact LRU hit counts at a fixed list of cache sizes in
// one pass, at close to the cost of a single LRU simulation. It keeps one
// LRU list as long as the largest size, cut into buckets by markers at the
// other sizes: bucket i holds the keys at depths (sizes[i-1], sizes[i]]. A
// request found in bucket b hits in every cache of size >= sizes[b] (LRU is
// a stack algorithm: the size-k cache holds the top k keys of the list).
// Moving it to the front pushes the deepest key of each full bucket above
// b one bucket down; a miss pushes through every full bucket and drops the
// deepest key of the last. Hits land near the top, so the cascade is short
// on crawl traces; its cost is bounded by the number of sizes.
//
// Unlike [LRUStack] it gives hit counts only at the chosen sizes (not every
// stack distance) and its memory is bounded by the largest size rather than
// by the number of distinct keys. It is not safe for concurrent use.
type LRUMarkers struct {
	sizes  []int
	caps   []int32 // bucket capacities: sizes[i] - sizes[i-1]
	counts []int32 // keys in each bucket
	tails  []int32 // deepest node of each bucket, -1 when empty
	hits   []int64 // requests that hit in bucket i (counted ones only)
	idx    *policy.Index
	nodes  []lruNode
	free   int32
	head   int32
	reqs   int64
	seen   int64
	warmup int64
}

type lruNode struct {
	key        uint64
	prev, next int32
	bucket     int32
}

// NewLRUMarkers returns an LRUMarkers for sizes (any order; duplicates and
// non-positive sizes are errors). The first warmup requests update the list
// but are not counted.
func NewLRUMarkers(sizes []int, warmup int64) (*LRUMarkers, error) {
	s := slices.Clone(sizes)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 || s[0] < 1 {
		return nil, fmt.Errorf("replay: LRU markers: sizes must be positive, got %v", sizes)
	}
	if s[len(s)-1] > policy.MaxSize {
		return nil, fmt.Errorf("replay: LRU markers: size %d is larger than %d", s[len(s)-1], policy.MaxSize)
	}
	m := &LRUMarkers{sizes: s, caps: make([]int32, len(s)), counts: make([]int32, len(s)), tails: make([]int32, len(s)),
		hits: make([]int64, len(s)), head: -1, free: -1, warmup: warmup}
	prev := 0
	for i, v := range s {
		m.caps[i] = int32(v - prev)
		m.tails[i] = -1
		prev = v
	}
	m.idx = policy.NewIndex(s[len(s)-1])
	return m, nil
}

// Access processes one request.
func (m *LRUMarkers) Access(key uint64) {
	m.seen++
	counted := m.seen > m.warmup
	if counted {
		m.reqs++
	}
	x := int32(-1)
	if v, ok := m.idx.Get(key); ok {
		x = int32(v)
		b := m.nodes[x].bucket
		if counted {
			m.hits[b]++
		}
		if x == m.head {
			return // depth 1: nothing moves
		}
		// Take x out of its bucket and the list.
		if m.tails[b] == x {
			m.tails[b] = m.nodes[x].prev // stays in bucket b after the shift below
		}
		m.counts[b]--
		m.unlink(x)
	} else {
		x = m.alloc(key)
		m.idx.Put(key, int(x))
	}
	// Put x at the front, in bucket 0, and push one key down through every
	// full bucket.
	m.pushFront(x)
	in := x
	for j := range m.caps {
		m.nodes[in].bucket = int32(j)
		if m.counts[j] < m.caps[j] {
			m.counts[j]++
			if m.tails[j] < 0 {
				m.tails[j] = in
			}
			return
		}
		// Bucket j is full: its deepest key moves to bucket j+1.
		out := m.tails[j]
		m.tails[j] = m.nodes[out].prev
		in = out
	}
	// The deepest key fell out of the largest cache.
	m.unlink(in)
	m.idx.Delete(m.nodes[in].key)
	m.nodes[in].next = m.free
	m.free = in
}

// AccessBatch processes keys in order.
func (m *LRUMarkers) AccessBatch(keys []uint64) {
	for _, k := range keys {
		m.Access(k)
	}
}

// Curve returns the hit counts so far. Distinct is not tracked (-1).
func (m *LRUMarkers) Curve() Curve {
	c := Curve{Sizes: slices.Clone(m.sizes), Requests: m.reqs, Hits: make([]int64, len(m.sizes)), Distinct: -1}
	var sum int64
	for i, h := range m.hits {
		sum += h
		c.Hits[i] = sum
	}
	return c
}

func (m *LRUMarkers) alloc(key uint64) int32 {
	if m.free >= 0 {
		x := m.free
		m.free = m.nodes[x].next
		m.nodes[x] = lruNode{key: key, prev: -1, next: -1}
		return x
	}
	m.nodes = append(m.nodes, lruNode{key: key, prev: -1, next: -1})
	return int32(len(m.nodes) - 1)
}

func (m *LRUMarkers) unlink(x int32) {
	n := &m.nodes[x]
	if n.prev >= 0 {
		m.nodes[n.prev].next = n.next
	} else {
		m.head = n.next
	}
	if n.next >= 0 {
		m.nodes[n.next].prev = n.prev
	}
	n.prev, n.next = -1, -1
}

func (m *LRUMarkers) pushFront(x int32) {
	m.nodes[x].prev = -1
	m.nodes[x].next = m.head
	if m.head >= 0 {
		m.nodes[m.head].prev = x
	}
	m.head = x
}
