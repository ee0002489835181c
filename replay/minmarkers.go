package replay

import (
	"context"
	"fmt"
	"math"
	"slices"

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
			return Curve{}, fmt.Errorf("replay: MIN markers: %d requests, at most %d", len(trace), policy.NoNextUse-1)
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
	m := len(s)
	caps := make([]int, m)
	prev := 0
	for i, v := range s {
		caps[i] = v - prev
		prev = v
	}
	heaps := make([]minHeap, m)
	idx := policy.NewIndex(s[m-1])
	var nodes []minNode
	free := int32(-1)
	hits := make([]int64, m)
	var reqs int64
	for t, key := range trace {
		if t%policy.CheckEvery == 0 {
			if policy.Canceled(cancel) {
				return Curve{}, context.Canceled
			}
			if tick != nil {
				tick(t)
			}
		}
		nu := int64(next[t])
		if next[t] == policy.NoNextUse {
			nu = math.MaxInt64
		}
		counted := int64(t) >= warmup
		if counted {
			reqs++
		}
		b := m // bucket of key; m = not cached at any size
		var y int32
		if v, ok := idx.Get(key); ok {
			y = int32(v)
			b = int(nodes[y].bucket)
			if counted {
				hits[b]++
			}
			heaps[b].remove(nodes, y)
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
		nodes[y].next = nu
		// y joins bucket 0; the farthest key of each full bucket above b
		// moves one bucket down.
		carry := y
		j := 0
		for ; j < m; j++ {
			h := &heaps[j]
			if j == b || len(h.ids) < caps[j] {
				nodes[carry].bucket = int32(j)
				h.push(nodes, carry)
				carry = -1
				break
			}
			// Bucket j is full. The requested key is always admitted, so
			// bucket 0 evicts its farthest key unconditionally; below, the
			// carried key e_{j-1} and the bucket's farthest compete.
			if top := h.ids[0]; j == 0 || nodes[top].next > nodes[carry].next {
				h.popPush(nodes, carry)
				nodes[carry].bucket = int32(j)
				carry = top
			}
		}
		if carry >= 0 { // farthest key of the largest cache: evicted
			idx.Delete(nodes[carry].key)
			nodes[carry].pos = free
			free = carry
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

type minNode struct {
	key    uint64
	next   int64 // next request time; MaxInt64 when never
	bucket int32
	pos    int32 // index in its bucket's heap; next free node when free
}

// minHeap is a max-heap of node ids by next request time, tracking each
// node's position so a node can be removed from the middle.
type minHeap struct{ ids []int32 }

func (h *minHeap) less(nodes []minNode, i, j int) bool {
	return nodes[h.ids[i]].next > nodes[h.ids[j]].next
}

func (h *minHeap) swap(nodes []minNode, i, j int) {
	h.ids[i], h.ids[j] = h.ids[j], h.ids[i]
	nodes[h.ids[i]].pos = int32(i)
	nodes[h.ids[j]].pos = int32(j)
}

func (h *minHeap) up(nodes []minNode, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(nodes, i, p) {
			return
		}
		h.swap(nodes, i, p)
		i = p
	}
}

func (h *minHeap) down(nodes []minNode, i int) {
	n := len(h.ids)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.less(nodes, r, l) {
			c = r
		}
		if !h.less(nodes, c, i) {
			return
		}
		h.swap(nodes, i, c)
		i = c
	}
}

func (h *minHeap) push(nodes []minNode, id int32) {
	h.ids = append(h.ids, id)
	nodes[id].pos = int32(len(h.ids) - 1)
	h.up(nodes, len(h.ids)-1)
}

// popPush replaces the top with id.
func (h *minHeap) popPush(nodes []minNode, id int32) {
	h.ids[0] = id
	nodes[id].pos = 0
	h.down(nodes, 0)
}

func (h *minHeap) remove(nodes []minNode, id int32) {
	i := int(nodes[id].pos)
	last := len(h.ids) - 1
	if i != last {
		h.swap(nodes, i, last)
	}
	h.ids = h.ids[:last]
	if i < last {
		h.down(nodes, i)
		h.up(nodes, i)
	}
}
