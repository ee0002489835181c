package policy

import (
	"context"
	"fmt"
	"math"
	"unsafe"
)

// MIN is Belady's clairvoyant policy as the paper runs it: on a miss with a
// full cache, evict the cached key whose next request is farthest in the
// future (never requested again counts as infinitely far), then admit the
// requested key — always, even when its own next request is farther than
// every cached key's ("a miss adds the item"). It needs the whole trace up
// front: next-use times come from [NextUse] (a backward pass with a hash
// table from key to last seen position) unless Options.NextUse supplies
// them, and cached keys sit in a 4-ary max-heap keyed by next-use time
// (a hit moves its key's next use later, a sift up: 4 children a node halve
// the levels it climbs against a binary heap; keys never requested again
// tie, and which of them goes does not change any hit).
//
// Access must be called with Trace[0], Trace[1], ... in order; a call with
// any other key, or past the end of the trace, is a programming error and
// panics with a message saying so. It is not safe for concurrent use.
type MIN struct {
	size  int
	n     int
	pos   int
	trace []uint64
	next  []int64
	t     table
	nodes []minNode  // node i holds a cached key and its heap position
	heap  []minEntry // max-heap on next; heap[:n] is live
	limit int        // nodes and heap grow with the keys held, up to this
	ahead [8]int32   // nodes of the keys nodeAhead..heapAhead requests ahead, -1 for none
}

type minNode struct {
	key  uint64
	hpos int32
}

type minEntry struct {
	next int64 // position of the next request, math.MaxInt64 for none
	node int32
}

var _ Policy = (*MIN)(nil)

// NewMIN returns an empty MIN cache of size >= 1 keys for the request
// sequence opts.Trace (which must not be nil). opts.NextUse, when not nil,
// must be [NextUse](opts.Trace); otherwise it is computed here.
func NewMIN(size int, opts Options) (*MIN, error) {
	if err := checkOffline("min", size, opts); err != nil {
		return nil, err
	}
	next := opts.NextUse
	if next == nil {
		var err error
		if next, err = NextUseCancel(opts.Trace, opts.Cancel); err != nil {
			return nil, err
		}
	} else if len(next) != len(opts.Trace) {
		return nil, fmt.Errorf("policy: min: Options.NextUse has %d entries for a trace of %d requests", len(next), len(opts.Trace))
	}
	// No cache needs more nodes than the trace has requests.
	k := size
	if k > len(opts.Trace) {
		k = max(len(opts.Trace), 1)
	}
	return &MIN{
		size:  size,
		trace: opts.Trace,
		next:  next,
		t:     newTable(k),
		nodes: make([]minNode, 0, startCap(k)),
		heap:  make([]minEntry, 0, startCap(k)),
		limit: k,
	}, nil
}

// NextUse returns, for each position i of trace, the position of the next
// request for trace[i], or -1 if there is none. It reads the trace
// backwards with a hash table from key to the last position seen, as the
// paper describes.
func NextUse(trace []uint64) []int64 {
	next, _ := NextUseCancel(trace, nil)
	return next
}

// NextUseCancel is [NextUse] stopped by closing cancel (nil: never), which
// it looks at every [CheckEvery] requests; it then returns
// context.Canceled.
func NextUseCancel(trace []uint64, cancel <-chan struct{}) ([]int64, error) {
	return nextUse[int64](trace, cancel, -1)
}

// nextUse fills, from the end of trace back, each request's next request
// of the same key, or none; T is wide enough for every position.
func nextUse[T int64 | uint32](trace []uint64, cancel <-chan struct{}, none T) ([]T, error) {
	next := make([]T, len(trace))
	t := newTable(min(len(trace), 1<<16))
	for i := len(trace) - 1; i >= 0; i-- {
		if i%CheckEvery == 0 && Canceled(cancel) {
			return nil, context.Canceled
		}
		if i >= touchAhead {
			t.prefetch(trace[i-touchAhead])
		}
		if j, ok := t.swap(trace[i], i); ok {
			next[i] = T(j)
		} else {
			next[i] = none
		}
	}
	return next, nil
}

// NoNextUse marks, in [NextUse32Cancel], a request whose key is not requested
// again.
const NoNextUse = math.MaxUint32

// NextUse32Cancel is [NextUseCancel] in half the memory: positions as
// uint32, [NoNextUse] for none. It takes traces of fewer than
// [NoNextUse] requests (32 GiB of keys) and returns an error for longer
// ones.
func NextUse32Cancel(trace []uint64, cancel <-chan struct{}) ([]uint32, error) {
	if int64(len(trace)) >= NoNextUse {
		return nil, fmt.Errorf("policy: next-use times: %d requests, at most %d fit in 32 bits", len(trace), int64(NoNextUse-1))
	}
	return nextUse[uint32](trace, cancel, NoNextUse)
}

// MIN knows the requests to come, and prefetches what they will touch
// (see [table.prefetch]) in three stages, each using what the one before
// brought in: touchAhead requests ahead (NextUse too) the key's table slot,
// nodeAhead ahead its node, heapAhead ahead its heap entry and that
// entry's parent. The stages look keys up as the cache is now; a key
// evicted or moved by then only makes a prefetch useless, never a result
// wrong.
const (
	touchAhead = 12
	nodeAhead  = 8
	heapAhead  = 4
)

// prefetchAhead runs the three prefetch stages for the requests after pos,
// once the table is larger than the caches (before, the stages only cost).
func (c *MIN) prefetchAhead() {
	if len(c.t.slots) < prefetchSlots {
		return
	}
	n := len(c.trace)
	if a := c.pos + touchAhead; a < n {
		c.t.prefetch(c.trace[a])
	}
	if a := c.pos + nodeAhead; a < n {
		v, _, ok := c.t.find(c.trace[a])
		if ok {
			prefetch(unsafe.Pointer(&c.nodes[v]))
		} else {
			v = -1
		}
		c.ahead[a%len(c.ahead)] = int32(v)
	}
	if a := c.pos + heapAhead; a < n {
		if v := c.ahead[a%len(c.ahead)]; v >= 0 && int(v) < len(c.nodes) {
			if h := int(c.nodes[v].hpos); h < len(c.heap) {
				prefetch(unsafe.Pointer(&c.heap[h]))
				prefetch(unsafe.Pointer(&c.heap[(h-1)/minArity]))
			}
		}
	}
}

// Access implements [Policy]. key must be the trace's next request.
func (c *MIN) Access(key uint64) bool {
	if c.pos >= len(c.trace) {
		panic(fmt.Sprintf("policy: min: Access(%#x) after the last of the trace's %d requests", key, len(c.trace)))
	}
	if want := c.trace[c.pos]; key != want {
		panic(fmt.Sprintf("policy: min: Access(%#x) at trace position %d, which holds %#x (MIN must see the trace in order)", key, c.pos, want))
	}
	nu := c.next[c.pos]
	if nu < 0 {
		nu = math.MaxInt64
	}
	c.pos++
	c.prefetchAhead()
	v, free, ok := c.t.find(key)
	if ok {
		h := c.nodes[v].hpos
		c.heap[h].next = nu // next use only moves later: sift up
		c.up(int(h))
		return true
	}
	if c.n < c.size {
		i := int32(c.n)
		c.nodes = grow(c.nodes, c.n+1, c.limit)
		c.heap = grow(c.heap, c.n+1, c.limit)
		c.nodes[i].key = key
		c.heap[c.n] = minEntry{next: nu, node: i}
		c.nodes[i].hpos = int32(c.n)
		c.n++
		c.up(c.n - 1)
		c.t.put(key, int(i))
		return false
	}
	// Evict the root (farthest next use) and reuse its node and heap slot.
	// The key goes in at the free table slot find gave before the victim's
	// key is deleted (the table has room for one more key than the cache).
	i := c.heap[0].node
	c.t.putAt(free, key, int(i))
	c.t.del(c.nodes[i].key)
	c.nodes[i].key = key
	c.heap[0].next = nu
	c.down(0)
	return false
}

// minArity is the number of children of a heap node.
const minArity = 4

func (c *MIN) up(j int) {
	h := c.heap
	e := h[j]
	for j > 0 {
		p := (j - 1) / minArity
		if h[p].next >= e.next {
			break
		}
		h[j] = h[p]
		c.nodes[h[j].node].hpos = int32(j)
		j = p
	}
	h[j] = e
	c.nodes[e.node].hpos = int32(j)
}

func (c *MIN) down(j int) {
	h := c.heap[:c.n]
	e := h[j]
	for {
		l := minArity*j + 1
		if l >= len(h) {
			break
		}
		// The child with the farthest next use.
		for r, end := l+1, min(l+minArity, len(h)); r < end; r++ {
			if h[r].next > h[l].next {
				l = r
			}
		}
		if h[l].next <= e.next {
			break
		}
		h[j] = h[l]
		c.nodes[h[j].node].hpos = int32(j)
		j = l
	}
	h[j] = e
	c.nodes[e.node].hpos = int32(j)
}

// Name implements [Policy].
func (c *MIN) Name() string { return "min" }

// Len implements [Policy].
func (c *MIN) Len() int { return c.n }

// memBytes leaves out the next-use array, which is 8 bytes per request of
// the trace rather than per cached key.
func (c *MIN) memBytes() int { return c.t.bytes() + cap(c.nodes)*16 + cap(c.heap)*16 }
