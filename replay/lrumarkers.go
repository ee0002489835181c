package replay

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/crawltrace/crawltrace/internal/hugemem"
	pf "github.com/crawltrace/crawltrace/internal/prefetch"

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
	nodes  []lruNode // in mem, up to its capacity
	mem    *hugemem.Block
	free   int32
	head   int32
	reqs   int64
	seen   int64
	warmup int64
	// deep is the first bucket whose tail is prefetched: the buckets above
	// it hold few enough keys to stay in the caches.
	deep int
	// prefetch forces AccessBatch's prefetches on a small index (tests).
	prefetch bool
	ahead    [32]uintptr // scratch: the tails to prefetch
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
	// The nodes live in memory reserved for the largest size, on huge
	// pages where the kernel offers them: the list is walked at random, and
	// on small pages each step would also miss the TLB. Only the part
	// written is backed; if less could be reserved, append moves the nodes
	// to the Go heap when they outgrow it.
	nb := int(unsafe.Sizeof(lruNode{}))
	m.mem = hugemem.Reserve((s[len(s)-1]+1)*nb, 64<<20)
	if b := m.mem.Bytes(); len(b) >= nb {
		m.nodes = unsafe.Slice((*lruNode)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/nb)[:0]
	}
	m.deep = len(s)
	for i, v := range s {
		if v >= deepDepth {
			m.deep = i
			break
		}
	}
	return m, nil
}

// Access processes one request.
func (m *LRUMarkers) Access(key uint64) {
	m.seen++
	counted := m.seen > m.warmup
	if counted {
		m.reqs++
	}
	m.access(key, counted)
}

// AccessBatch processes keys in order. Once the index outgrows the caches
// it prefetches, as [policy.LRU]'s AccessBatch does, the index slot of the
// key tableAhead requests ahead and the list node of the key nodeAhead
// ahead (found in a slot prefetched earlier; a key moved or evicted by
// then only wastes the prefetch).
func (m *LRUMarkers) AccessBatch(keys []uint64) {
	// The warmup requests first, then the counted ones, so the loop below
	// does not test each request against the warmup.
	if w := m.warmup - m.seen; w > 0 {
		w = min(w, int64(len(keys)))
		m.batch(keys[:w], false)
		m.seen += w
		keys = keys[w:]
	}
	m.batch(keys, true)
	m.seen += int64(len(keys))
	m.reqs += int64(len(keys))
}

// tableAhead and nodeAhead are how many requests ahead
// [LRUMarkers.AccessBatch] prefetches index slots and list nodes.
const (
	tableAhead = 8
	nodeAhead  = 4
)

func (m *LRUMarkers) batch(keys []uint64, counted bool) {
	if !m.prefetch && !m.idx.Large() {
		for _, k := range keys {
			m.access(k, counted)
		}
		return
	}
	for i, k := range keys {
		if j := i + tableAhead; j < len(keys) {
			m.idx.Prefetch(keys[j])
		}
		if j := i + nodeAhead; j < len(keys) {
			if v, ok := m.idx.Get(keys[j]); ok {
				prefetchAddr(unsafe.Pointer(&m.nodes[v]))
			}
		}
		m.access(k, counted)
	}
}

// access processes one request, counted or not.
func (m *LRUMarkers) access(key uint64, counted bool) {
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
	// full bucket. The new tail of each deep bucket is prefetched: the next
	// request that pushes through that bucket reads it, and would
	// otherwise wait on memory for it (one wait per deep bucket crossed).
	m.pushFront(x)
	in := x
	ahead := &m.ahead
	na := 0
	for j := range m.caps {
		m.nodes[in].bucket = int32(j)
		if m.counts[j] < m.caps[j] {
			m.counts[j]++
			if m.tails[j] < 0 {
				m.tails[j] = in
			}
			prefetchAddrs(ahead[:na])
			return
		}
		// Bucket j is full: its deepest key moves to bucket j+1.
		out := m.tails[j]
		t := m.nodes[out].prev
		m.tails[j] = t
		if j >= m.deep && t >= 0 && na < len(ahead) {
			ahead[na] = uintptr(unsafe.Pointer(&m.nodes[t]))
			na++
		}
		in = out
	}
	prefetchAddrs(ahead[:na])
	// The deepest key fell out of the largest cache.
	m.unlink(in)
	m.idx.Delete(m.nodes[in].key)
	m.nodes[in].next = m.free
	m.free = in
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

// deepDepth is the list depth from which LRUMarkers prefetches bucket
// tails: the top 4096 nodes (96 KiB) stay in a core's caches.
const deepDepth = 1 << 12

// prefetchAddr asks the processor for the cache line at p (see
// internal/prefetch); p must point into memory the caller keeps alive.
func prefetchAddr(p unsafe.Pointer) {
	a := [1]uintptr{uintptr(p)}
	pf.Addrs(a[:])
}

// prefetchAddrs asks for the cache lines of addrs in one call.
func prefetchAddrs(addrs []uintptr) {
	if len(addrs) > 0 {
		pf.Addrs(addrs)
	}
}
