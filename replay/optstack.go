package replay

import (
	"fmt"
	"math"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// never is the next-use time of a key that is not requested again.
const never = math.MaxInt64

// NextUse returns, for each position i of trace, the position of the next
// request of trace[i], or -1 when there is none, and the number of distinct
// keys. It is [policy.NextUse] (one backward pass with a hash table, the
// paper's N_t) plus the distinct count.
func NextUse(trace []uint64) (next []int64, distinct int) {
	next = policy.NextUse(trace)
	for _, n := range next {
		if n < 0 { // the last request of each distinct key
			distinct++
		}
	}
	return next, distinct
}

// MINCurve computes, by the OPT stack, exact hit counts of Belady's MIN
// (evict the cached key whose next request is farthest away; every missed
// key is admitted) for all sizes in one pass over an in-memory trace.
// `crawltrace replay` uses the faster [MINMarkers] instead; the tests check
// the two against each other, replay does not compare them at run time. next is [NextUse] of trace (nil
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
// time over positions 1..i, and only the prefix maxima ("records") move,
// each into the position of the next record (the last into d); every other
// key keeps its position. The stack is mostly sorted by next-request time,
// so records are many (hundreds per request on web-like traces) but the
// runs of non-records between them ("gaps") are few. Writing the keys above
// x as blocks [record, gap], the update is: x goes on top and each record
// moves past its own gap. The stack is kept in an implicit treap (a
// balanced sequence with subtree size, maximum time, first and last time,
// and "contains a descent" per node), which finds each gap (the first
// descent after a record, then the first time above the running maximum)
// and rotates its block in O(log n) expected time, so a request costs
// O((gaps+1) log n) instead of the O(d) of the naive pushdown. A key never
// requested again has time +inf and ends the chain. The stack is cut at the
// largest size (keys below it never affect the top).
//
// Memory: MIN needs the whole trace (8 bytes per request) and its next-use
// times (8 more) in memory, plus about 80 bytes per stack entry.
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

// optStack is MINCurve's stack: an implicit treap over stack positions.
// Node 0 is nil. It is not safe for concurrent use.
type optStack struct {
	m    int       // maximum depth kept
	t    []optNode // nodes, one cache line each; t[0] is nil
	free []int32
	node map[uint64]int32
	root int32
	rng  uint64
	gaps [][2]int // scratch: (record index, next record index)
}

// optNode is one stack entry and the summary of its subtree.
type optNode struct {
	nu   int64 // the key's next-request time
	mx   int64 // subtree maximum of nu
	fst  int64 // subtree first (top-most) nu
	lst  int64 // subtree last nu
	key  uint64
	l, r int32
	par  int32
	pri  uint32
	sz   int32
	desc bool // subtree has adjacent entries a, b with nu(a) > nu(b)
}

func newOPTStack(maxDepth, traceLen int) *optStack {
	m := max(1, min(maxDepth, traceLen))
	n := min(m+2, 1<<16)
	o := &optStack{m: m, node: make(map[uint64]int32), rng: 0x9e3779b97f4a7c15}
	o.grow(n)
	return o
}

func (o *optStack) grow(n int) {
	o.t = append(o.t, make([]optNode, n-len(o.t))...)
}

// alloc returns a fresh single-node treap.
func (o *optStack) alloc(k uint64, nu int64) int32 {
	var n int32
	if len(o.free) > 0 {
		n = o.free[len(o.free)-1]
		o.free = o.free[:len(o.free)-1]
	} else {
		n = int32(len(o.node) + 1)
		if int(n) >= len(o.t) {
			o.grow(min(2*len(o.t), o.m+2))
		}
	}
	o.rng ^= o.rng << 13
	o.rng ^= o.rng >> 7
	o.rng ^= o.rng << 17
	o.t[n] = optNode{nu: nu, key: k, pri: uint32(o.rng >> 32)}
	o.pull(n)
	return n
}

func (o *optStack) pull(n int32) {
	t := o.t
	x := &t[n]
	v := x.nu
	mx, fst, lst, desc, sz := v, v, v, false, int32(1)
	if x.l != 0 {
		c := &t[x.l]
		c.par = n
		mx, fst, sz = max(mx, c.mx), c.fst, sz+c.sz
		desc = c.desc || c.lst > v
	}
	if x.r != 0 {
		c := &t[x.r]
		c.par = n
		mx, lst, sz = max(mx, c.mx), c.lst, sz+c.sz
		desc = desc || c.desc || v > c.fst
	}
	x.mx, x.fst, x.lst, x.desc, x.sz = mx, fst, lst, desc, sz
}

// split cuts t into its first k entries and the rest.
func (o *optStack) split(t int32, k int) (int32, int32) {
	if t == 0 {
		return 0, 0
	}
	if ls := int(o.t[o.t[t].l].sz); k <= ls {
		a, b := o.split(o.t[t].l, k)
		o.t[t].l = b
		o.pull(t)
		return a, t
	} else {
		a, b := o.split(o.t[t].r, k-ls-1)
		o.t[t].r = a
		o.pull(t)
		return t, b
	}
}

func (o *optStack) merge(a, b int32) int32 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	case o.t[a].pri > o.t[b].pri:
		o.t[a].r = o.merge(o.t[a].r, b)
		o.pull(a)
		return a
	default:
		o.t[b].l = o.merge(a, o.t[b].l)
		o.pull(b)
		return b
	}
}

// rank is n's 0-based position in the tree rooted at o.root.
func (o *optStack) rank(n int32) int {
	r := int(o.t[o.t[n].l].sz)
	for n != o.root {
		p := o.t[n].par
		if o.t[p].r == n {
			r += int(o.t[o.t[p].l].sz) + 1
		}
		n = p
	}
	return r
}

// firstDescent is the first index i >= 1 of t with nu(i) < nu(i-1), or -1.
func (o *optStack) firstDescent(t int32) int {
	base := 0
	for t != 0 && o.t[t].desc {
		l, r := o.t[t].l, o.t[t].r
		switch {
		case l != 0 && o.t[l].desc:
			t = l
		case l != 0 && o.t[l].lst > o.t[t].nu:
			return base + int(o.t[l].sz)
		case r != 0 && o.t[t].nu > o.t[r].fst:
			return base + int(o.t[l].sz) + 1
		default:
			base += int(o.t[l].sz) + 1
			t = r
		}
	}
	return -1
}

// firstAbove is the first index i >= from of t with nu(i) > v, or -1.
func (o *optStack) firstAbove(t int32, from int, v int64) int {
	if t == 0 || o.t[t].mx <= v {
		return -1
	}
	ls := int(o.t[o.t[t].l].sz)
	if from < ls {
		if i := o.firstAbove(o.t[t].l, from, v); i >= 0 {
			return i
		}
	}
	if from <= ls && o.t[t].nu > v {
		return ls
	}
	if i := o.firstAbove(o.t[t].r, max(from-ls-1, 0), v); i >= 0 {
		return ls + 1 + i
	}
	return -1
}

// at is the nu of the entry at index i of t.
func (o *optStack) at(t int32, i int) int64 {
	for {
		ls := int(o.t[o.t[t].l].sz)
		switch {
		case i < ls:
			t = o.t[t].l
		case i == ls:
			return o.t[t].nu
		default:
			i -= ls + 1
			t = o.t[t].r
		}
	}
}

// access requests k, whose next request is at nu (never if none), and
// returns its depth before the request (1-based) or 0 if it was not in the
// kept stack.
func (o *optStack) access(k uint64, nu int64) int64 {
	var above, x, below int32
	var d int64
	if n, in := o.node[k]; in {
		pos := o.rank(n)
		d = int64(pos) + 1
		var rest int32
		above, rest = o.split(o.root, pos)
		x, below = o.split(rest, 1)
		o.t[x].nu = nu
		o.pull(x)
	} else {
		above = o.root
		x = o.alloc(k, nu)
		o.node[k] = x
	}
	above = o.pushDown(above)
	o.root = o.merge(o.merge(x, above), below)
	if int(o.t[o.root].sz) > o.m {
		var last int32
		o.root, last = o.split(o.root, o.m)
		delete(o.node, o.t[last].key)
		o.free = append(o.free, last)
	}
	o.t[o.root].par = 0
	return d
}

// pushDown applies the MIN stack update to the entries above the requested
// key: each record moves past the gap of non-records that follows it.
func (o *optStack) pushDown(t int32) int32 {
	n := int(o.t[t].sz)
	if n < 2 {
		return t
	}
	// Find the gaps on the unchanged sequence first; the rotations below
	// each stay inside their own block, so indices remain valid.
	o.gaps = o.gaps[:0]
	q := 0
	for q < n-1 {
		// Entries from q up to the first descent are increasing: records.
		var g int
		if q == 0 {
			g = o.firstDescent(t)
		} else {
			a, b := o.split(t, q)
			g = o.firstDescent(b)
			if g >= 0 {
				g += q
			}
			t = o.merge(a, b)
		}
		if g < 0 {
			break
		}
		m := o.at(t, g-1) // running maximum: the record before the gap
		h := n
		if m != never {
			if i := o.firstAbove(t, g, m); i >= 0 {
				h = i
			}
		}
		o.gaps = append(o.gaps, [2]int{g - 1, h})
		q = h
	}
	for _, gp := range o.gaps {
		// Block [rec, next): move its first entry (the record) to its end.
		a, rest := o.split(t, gp[0])
		rec, rest := o.split(rest, 1)
		gap, c := o.split(rest, gp[1]-gp[0]-1)
		t = o.merge(o.merge(a, gap), o.merge(rec, c))
	}
	return t
}
