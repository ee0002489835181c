package replay

import (
	"fmt"
	"math"
)

// never is the next-use time of a key that is not requested again.
const never = math.MaxInt64

// NextUse returns, for each position i of trace, the position of the next
// request of trace[i], or -1 when there is none, and the number of distinct
// keys. It is one backward pass with a hash map (the paper's N_t).
func NextUse(trace []uint64) (next []int64, distinct int) {
	next = make([]int64, len(trace))
	last := make(map[uint64]int64)
	for i := len(trace) - 1; i >= 0; i-- {
		k := trace[i]
		if j, ok := last[k]; ok {
			next[i] = j
		} else {
			next[i] = -1
		}
		last[k] = int64(i)
	}
	return next, len(last)
}

// MINCurve computes exact hit counts of Belady's MIN (evict the cached key
// whose next request is farthest away; every missed key is admitted) for all
// sizes in one pass over an in-memory trace. next is [NextUse] of trace (nil
// computes it); the first warmup requests are not counted.
//
// # Algorithm
//
// MIN is a stack algorithm for the priority "earlier next request first"
// (Mattson, Gecsei, Slutz & Traiger 1970): there is one stack whose top k
// entries are, at every time, the contents of the size-k MIN cache, and a
// request hits in every cache at least as large as its depth. On a request
// for x at depth d, x moves to the top, and the old top is pushed down: at
// each position above d the carried key and the resident key compare next
// request times, the sooner one stays and the later one is carried on, and
// the last carried key lands in position d (at the bottom on a miss).
//
// The carried key is therefore always the running maximum of next-request
// time over positions 1..i, and only the prefix maxima ("records") move:
// every other key keeps its position. Positions are thus fixed slots; a
// segment tree over the slots holding each key's next-request time finds the
// next record (the first slot after the current one whose time exceeds the
// carried time) in O(log n), and the update costs O((records+1) log n)
// instead of the O(d) of the naive pushdown. A key that is never requested
// again has time +inf and ends the chain at once. The stack is cut at the
// largest size (keys below it never affect the top), so memory is about 40
// bytes per slot plus the 8-byte next-use array per request: MIN needs the
// whole trace (8 bytes per request) and its next-use times (8 more) in
// memory.
//
// The test suite checks it request by request against a per-size MIN
// simulation for every size 1..64 on random traces.
func MINCurve(trace []uint64, next []int64, sizes []int, warmup int64) (Curve, error) {
	h, err := newDistHist(sizes, warmup)
	if err != nil {
		return Curve{}, err
	}
	if next == nil {
		next, _ = NextUse(trace)
	}
	if len(next) != len(trace) {
		return Curve{}, fmt.Errorf("replay: MIN: %d next-use times for %d requests", len(next), len(trace))
	}
	o := newOPTStack(h.sizes[len(h.sizes)-1], len(trace))
	var distinct int64 // each key's last request has no next one
	for t, k := range trace {
		nu := next[t]
		if nu < 0 {
			nu = never
			distinct++
		}
		h.add(o.access(k, nu))
	}
	return h.curve(distinct), nil
}

// optStack is the slot array and segment tree of MINCurve. It is not safe
// for concurrent use.
type optStack struct {
	m      int              // maximum depth kept
	depth  int              // slots in use
	key    []uint64         // slot -> key
	pos    map[uint64]int32 // key -> slot, for keys in the kept stack
	tree   []int64          // max segment tree over slot next-use times
	leaves int              // power of two >= m
}

func newOPTStack(maxDepth, traceLen int) *optStack {
	m := max(1, min(maxDepth, traceLen))
	leaves := 1
	for leaves < m {
		leaves <<= 1
	}
	return &optStack{m: m, key: make([]uint64, m), pos: make(map[uint64]int32),
		tree: make([]int64, 2*leaves), leaves: leaves}
}

func (o *optStack) set(slot int, k uint64, nu int64) {
	o.key[slot] = k
	o.pos[k] = int32(slot)
	i := slot + o.leaves
	o.tree[i] = nu
	for i >>= 1; i > 0; i >>= 1 {
		o.tree[i] = max(o.tree[2*i], o.tree[2*i+1])
	}
}

// firstAbove returns the first slot in [lo, hi) whose time exceeds v, or -1.
func (o *optStack) firstAbove(lo, hi int, v int64) int {
	if lo >= hi {
		return -1
	}
	return o.find(1, 0, o.leaves, lo, hi, v)
}

func (o *optStack) find(node, nl, nr, lo, hi int, v int64) int {
	if nr <= lo || hi <= nl || o.tree[node] <= v {
		return -1
	}
	if nr-nl == 1 {
		return nl
	}
	mid := (nl + nr) / 2
	if r := o.find(2*node, nl, mid, lo, hi, v); r >= 0 {
		return r
	}
	return o.find(2*node+1, mid, nr, lo, hi, v)
}

// access requests k, whose next request is at nu (never if none), and
// returns its depth before the request (1-based) or 0 if it was not in the
// kept stack.
func (o *optStack) access(k uint64, nu int64) int64 {
	p, in := o.pos[k]
	var d int64
	end := -1 // slot receiving the last carried key; -1 = pushed out
	if in {
		d = int64(p) + 1
		end = int(p)
	} else if o.depth < o.m {
		end = o.depth
		o.depth++
	}
	if end == 0 {
		o.set(0, k, nu)
		return d
	}
	ck, cnu := o.key[0], o.tree[o.leaves]
	o.set(0, k, nu)
	limit := end
	if end < 0 {
		limit = o.depth
	}
	for r := 0; cnu != never; {
		i := o.firstAbove(r+1, limit, cnu)
		if i < 0 {
			break
		}
		rk, rnu := o.key[i], o.tree[o.leaves+i]
		o.set(i, ck, cnu)
		ck, cnu, r = rk, rnu, i
	}
	if end >= 0 {
		o.set(end, ck, cnu)
	} else {
		delete(o.pos, ck)
	}
	return d
}
