package replay

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/crawltrace/crawltrace/internal/hugemem"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// MINMarkers computes exact hit counts of Belady's MIN (every miss admitted,
// the cached key requested farthest in the future evicted) at a list of
// cache sizes in one pass over an in-memory trace. next is [NextUse] of
// trace (nil computes it); the first warmup requests are not counted.
//
// MIN has the inclusion property (the size-k cache is always contained in
// the size-k+1 cache), so the caches at sizes s_0 < s_1 < ... are nested and
// differ by buckets: bucket j holds the keys cached at size s_j but not at
// s_{j-1}. A request for a key in bucket b hits at every size >= s_b and
// misses below; each smaller cache s_j evicts its farthest key e_j, which
// is the farther of e_{j-1} and the farthest key of bucket j. So a request
// walks the buckets above its own (all of them on a miss) with one
// max-heap per bucket keyed by next request time: the carried key either
// passes a bucket (it is farther than all of it) or swaps with the bucket's
// farthest. Ties can only be between keys never requested again, which
// never hit, so the counts do not depend on how ties break.
//
// Memory: the trace and its next-use times (12 bytes per request: they
// are held as 32-bit positions, so a trace has fewer than 2^32 requests)
// plus about 40 bytes per cached key at the largest size.
func MINMarkers(trace []uint64, next []int64, sizes []int, warmup int64) (Curve, error) {
	var n32 []uint32
	if next != nil {
		if len(next) != len(trace) {
			return Curve{}, fmt.Errorf("replay: MIN markers: %d next-use times for %d requests", len(next), len(trace))
		}
		if int64(len(trace)) >= policy.NoNextUse {
			return Curve{}, fmt.Errorf("replay: MIN markers: %d requests, at most %d", len(trace), int64(policy.NoNextUse-1))
		}
		n32 = make([]uint32, len(next))
		for i, v := range next {
			n32[i] = policy.NoNextUse
			if v >= 0 {
				n32[i] = uint32(v)
			}
		}
	}
	return minMarkers(nil, trace, n32, sizes, warmup, nil)
}

// minMarkers is [MINMarkers] stopped by closing cancel (nil: never), which
// it looks at every policy.CheckEvery requests; it then returns
// context.Canceled. tick, when not nil, is told the position every
// policy.CheckEvery requests.
func minMarkers(cancel <-chan struct{}, trace []uint64, next []uint32, sizes []int, warmup int64, tick func(t int)) (Curve, error) {
	s := slices.Clone(sizes)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 || s[0] < 1 || s[len(s)-1] > policy.MaxSize {
		return Curve{}, fmt.Errorf("replay: MIN markers: sizes must be in 1..%d, got %v", policy.MaxSize, sizes)
	}
	if next == nil {
		var err error
		if next, err = policy.NextUse32Cancel(trace, cancel); err != nil {
			return Curve{}, err
		}
	}
	if len(next) != len(trace) {
		return Curve{}, fmt.Errorf("replay: MIN markers: %d next-use times for %d requests", len(next), len(trace))
	}
	return minMarkersRun(cancel, trace, next, s, warmup, tick, false)
}

// minMarkersRun is minMarkers on sorted, checked sizes; forcePrefetch
// turns the prefetches on for a small index (tests).
func minMarkersRun(cancel <-chan struct{}, trace []uint64, next []uint32, s []int, warmup int64, tick func(t int), forcePrefetch bool) (Curve, error) {
	m := len(s)
	caps := make([]int, m)
	prev := 0
	for i, v := range s {
		caps[i] = v - prev
		prev = v
	}
	// The keys held at once: at most the largest size and the distinct
	// keys (each key's last request has no next one), so the index, the
	// nodes and the heaps are allocated once.
	distinct := 0
	for _, v := range next {
		if v == policy.NoNextUse {
			distinct++
		}
	}
	held := max(1, min(s[m-1], distinct))
	idx := policy.NewIndexSized(held + 1)
	nodeMem := hugemem.Alloc((held + 1) * int(unsafe.Sizeof(minNode{})))
	defer nodeMem.Free()
	nodes := unsafe.Slice((*minNode)(unsafe.Pointer(unsafe.SliceData(nodeMem.Bytes()))), held+1)[:0]
	// Heap j holds at most caps[j] keys and at most held - s[j-1] + 1
	// (the buckets above it hold s[j-1] keys but for the one a request
	// just took out). One mapping holds them all, each heap at an offset
	// of minArity-1 mod minArity entries, so that the children of a node
	// share a 32-byte half of a cache line; only what is written is backed.
	// (An 8-ary heap, a whole line of children, was no faster: 4.9-5.0
	// against 4.8-4.9 CPU s on the 20M trace.)
	heapCap := make([]int, m)
	total := 0
	for j := range m {
		below := 0
		if j > 0 {
			below = s[j-1]
		}
		heapCap[j] = min(caps[j], max(held-below+1, 0))
		total += (heapCap[j] + 2*minArity - 2) &^ (minArity - 1)
	}
	heapMem := hugemem.Alloc(total * int(unsafe.Sizeof(minEntry{})))
	defer heapMem.Free()
	all := unsafe.Slice((*minEntry)(unsafe.Pointer(unsafe.SliceData(heapMem.Bytes()))), total)
	heaps := make([]minHeap, m)
	off := 0
	for j := range m {
		a := off + minArity - 1
		heaps[j].e = all[a : a : a+heapCap[j]]
		off += (heapCap[j] + 2*minArity - 2) &^ (minArity - 1)
	}
	free := int32(-1)
	hits := make([]int64, m)
	var reqs int64
	prefetching := forcePrefetch || idx.Large()
	var ahead [8]int32 // nodes of the keys minNodeAhead..minHeapAhead requests ahead, -1 for none
	for t, key := range trace {
		if t%policy.CheckEvery == 0 {
			if policy.Canceled(cancel) {
				return Curve{}, context.Canceled
			}
			if tick != nil {
				tick(t)
			}
		}
		if prefetching {
			if a := t + minTableAhead; a < len(trace) {
				idx.Prefetch(trace[a])
			}
			if a := t + minNodeAhead; a < len(trace) {
				v, ok := idx.Get(trace[a])
				if ok {
					prefetchAddr(unsafe.Pointer(&nodes[v]))
				} else {
					v = -1
				}
				ahead[a%len(ahead)] = int32(v)
			}
			if a := t + minHeapAhead; a < len(trace) {
				if v := ahead[a%len(ahead)]; v >= 0 && int(v) < len(nodes) {
					n := nodes[v]
					if h := heaps[n.bucket].e; n.pos >= 0 && int(n.pos) < len(h) {
						prefetchAddr(unsafe.Pointer(&h[n.pos]))
					}
				}
			}
		}
		counted := int64(t) >= warmup
		if counted {
			reqs++
		}
		b := m // bucket of key; m = not cached at any size
		var y, pos int32
		if v, ok := idx.Get(key); ok {
			y = int32(v)
			b, pos = int(nodes[y].bucket), nodes[y].pos
			if counted {
				hits[b]++
			}
		} else {
			if free >= 0 {
				y = free
				free = nodes[y].pos
			} else {
				nodes = append(nodes, minNode{})
				y = int32(len(nodes) - 1)
			}
			idx.Put(key, int(y))
			nodes[y].key = key
		}
		// y joins bucket 0; the farthest key of each full bucket above b
		// moves one bucket down; in bucket b the carried key takes the
		// requested key's place.
		carry := minEntry{next: next[t], node: y}
		j := 0
		for ; j < m; j++ {
			h := &heaps[j]
			if j == b {
				h.replace(nodes, int(pos), carry, int32(j))
				break
			}
			if len(h.e) < caps[j] {
				h.push(nodes, carry, int32(j))
				break
			}
			// Bucket j is full. The requested key is always admitted, so
			// bucket 0 evicts its farthest key unconditionally; below, the
			// carried key e_{j-1} and the bucket's farthest compete.
			if top := h.e[0]; j == 0 || top.next > carry.next {
				h.replace(nodes, 0, carry, int32(j))
				carry = top
			}
		}
		if j == m { // farthest key of the largest cache: evicted
			c := carry.node
			idx.Delete(nodes[c].key)
			nodes[c].pos = free
			free = c
		}
	}
	c := Curve{Sizes: s, Requests: reqs, Hits: make([]int64, m), Distinct: -1}
	var sum int64
	for i, h := range hits {
		sum += h
		c.Hits[i] = sum
	}
	return c, nil
}

// minTableAhead, minNodeAhead and minHeapAhead are how many requests
// ahead minMarkers prefetches a key's index slot, then its node (found in
// the slot prefetched before), then its heap entry (found in the node), as
// [policy.MIN] does; a key moved or evicted by then only wastes the
// prefetch.
const (
	minTableAhead = 12
	minNodeAhead  = 8
	minHeapAhead  = 4
)

type minNode struct {
	key    uint64
	bucket int32
	pos    int32 // index in its bucket's heap; next free node when free
}

// minEntry is a heap entry: a key's next request time (policy.NoNextUse
// when never, the farthest) and its node.
type minEntry struct {
	next uint32
	node int32
}

// minHeap is a 4-ary max-heap of entries by next request time, tracking
// each node's position so a node can be replaced in the middle. The next
// request times sit in the heap itself, so a sift compares entries of one
// cache line instead of reaching for each node.
type minHeap struct{ e []minEntry }

// minArity is the number of children of a heap node.
const minArity = 4

// push adds x to the heap, in bucket.
func (h *minHeap) push(nodes []minNode, x minEntry, bucket int32) {
	h.e = append(h.e, x)
	nodes[x.node].bucket = bucket
	h.up(nodes, len(h.e)-1, x)
}

// replace puts x, of bucket, at position i in place of what was there.
func (h *minHeap) replace(nodes []minNode, i int, x minEntry, bucket int32) {
	nodes[x.node].bucket = bucket
	if i > 0 && h.e[(i-1)/minArity].next < x.next {
		h.up(nodes, i, x)
	} else {
		h.down(nodes, i, x)
	}
}

// up moves x from hole i toward the root.
func (h *minHeap) up(nodes []minNode, i int, x minEntry) {
	e := h.e
	for i > 0 {
		p := (i - 1) / minArity
		if e[p].next >= x.next {
			break
		}
		place(e, nodes, i, e[p])
		i = p
	}
	place(e, nodes, i, x)
}

// down moves x from hole i toward the leaves.
func (h *minHeap) down(nodes []minNode, i int, x minEntry) {
	e := h.e
	n := len(e)
	for {
		l := minArity*i + 1
		if l >= n {
			break
		}
		// The child with the farthest next request.
		c := l
		for r, end := l+1, min(l+minArity, n); r < end; r++ {
			if e[r].next > e[c].next {
				c = r
			}
		}
		if e[c].next <= x.next {
			break
		}
		place(e, nodes, i, e[c])
		i = c
	}
	place(e, nodes, i, x)
}

// place puts x at position i of the heap e, and records the position in
// its node.
func place(e []minEntry, nodes []minNode, i int, x minEntry) {
	e[i] = x
	nodes[x.node].pos = int32(i)
}
