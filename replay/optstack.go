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
	m    int // maximum depth kept
	l, r []int32
	par  []int32
	pri  []uint32
	sz   []int32
	nu   []int64 // the key's next-request time
	mx   []int64 // subtree maximum of nu
	fst  []int64 // subtree first (top-most) nu
	lst  []int64 // subtree last nu
	desc []bool  // subtree has adjacent entries a, b with nu(a) > nu(b)
	key  []uint64
	free []int32
	node map[uint64]int32
	root int32
	rng  uint64
	gaps [][2]int // scratch: (record index, next record index)
}

func newOPTStack(maxDepth, traceLen int) *optStack {
	m := max(1, min(maxDepth, traceLen))
	n := min(m+2, 1<<16)
	o := &optStack{m: m, node: make(map[uint64]int32), rng: 0x9e3779b97f4a7c15}
	o.grow(n)
	return o
}

func (o *optStack) grow(n int) {
	o.l = append(o.l, make([]int32, n-len(o.l))...)
	o.r = append(o.r, make([]int32, n-len(o.r))...)
	o.par = append(o.par, make([]int32, n-len(o.par))...)
	o.pri = append(o.pri, make([]uint32, n-len(o.pri))...)
	o.sz = append(o.sz, make([]int32, n-len(o.sz))...)
	o.nu = append(o.nu, make([]int64, n-len(o.nu))...)
	o.mx = append(o.mx, make([]int64, n-len(o.mx))...)
	o.fst = append(o.fst, make([]int64, n-len(o.fst))...)
	o.lst = append(o.lst, make([]int64, n-len(o.lst))...)
	o.desc = append(o.desc, make([]bool, n-len(o.desc))...)
	o.key = append(o.key, make([]uint64, n-len(o.key))...)
}

// alloc returns a fresh single-node treap.
func (o *optStack) alloc(k uint64, nu int64) int32 {
	var n int32
	if len(o.free) > 0 {
		n = o.free[len(o.free)-1]
		o.free = o.free[:len(o.free)-1]
	} else {
		n = int32(len(o.node) + 1)
		if int(n) >= len(o.l) {
			o.grow(min(2*len(o.l), o.m+2))
		}
	}
	o.rng ^= o.rng << 13
	o.rng ^= o.rng >> 7
	o.rng ^= o.rng << 17
	o.l[n], o.r[n], o.par[n], o.pri[n], o.key[n], o.nu[n] = 0, 0, 0, uint32(o.rng>>32), k, nu
	o.pull(n)
	return n
}

func (o *optStack) pull(n int32) {
	l, r := o.l[n], o.r[n]
	v := o.nu[n]
	o.sz[n] = 1 + o.sz[l] + o.sz[r]
	mx, fst, lst, desc := v, v, v, false
	if l != 0 {
		o.par[l] = n
		mx, fst = max(mx, o.mx[l]), o.fst[l]
		desc = o.desc[l] || o.lst[l] > v
	}
	if r != 0 {
		o.par[r] = n
		mx, lst = max(mx, o.mx[r]), o.lst[r]
		desc = desc || o.desc[r] || v > o.fst[r]
	}
	o.mx[n], o.fst[n], o.lst[n], o.desc[n] = mx, fst, lst, desc
}

// split cuts t into its first k entries and the rest.
func (o *optStack) split(t int32, k int) (int32, int32) {
	if t == 0 {
		return 0, 0
	}
	if ls := int(o.sz[o.l[t]]); k <= ls {
		a, b := o.split(o.l[t], k)
		o.l[t] = b
		o.pull(t)
		return a, t
	} else {
		a, b := o.split(o.r[t], k-ls-1)
		o.r[t] = a
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
	case o.pri[a] > o.pri[b]:
		o.r[a] = o.merge(o.r[a], b)
		o.pull(a)
		return a
	default:
		o.l[b] = o.merge(a, o.l[b])
		o.pull(b)
		return b
	}
}

// rank is n's 0-based position in the tree rooted at o.root.
func (o *optStack) rank(n int32) int {
	r := int(o.sz[o.l[n]])
	for n != o.root {
		p := o.par[n]
		if o.r[p] == n {
			r += int(o.sz[o.l[p]]) + 1
		}
		n = p
	}
	return r
}

// firstDescent is the first index i >= 1 of t with nu(i) < nu(i-1), or -1.
func (o *optStack) firstDescent(t int32) int {
	base := 0
	for t != 0 && o.desc[t] {
		l, r := o.l[t], o.r[t]
		switch {
		case l != 0 && o.desc[l]:
			t = l
		case l != 0 && o.lst[l] > o.nu[t]:
			return base + int(o.sz[l])
		case r != 0 && o.nu[t] > o.fst[r]:
			return base + int(o.sz[l]) + 1
		default:
			base += int(o.sz[l]) + 1
			t = r
		}
	}
	return -1
}

// firstAbove is the first index i >= from of t with nu(i) > v, or -1.
func (o *optStack) firstAbove(t int32, from int, v int64) int {
	if t == 0 || o.mx[t] <= v {
		return -1
	}
	ls := int(o.sz[o.l[t]])
	if from < ls {
		if i := o.firstAbove(o.l[t], from, v); i >= 0 {
			return i
		}
	}
	if from <= ls && o.nu[t] > v {
		return ls
	}
	if i := o.firstAbove(o.r[t], max(from-ls-1, 0), v); i >= 0 {
		return ls + 1 + i
	}
	return -1
}

// at is the nu of the entry at index i of t.
func (o *optStack) at(t int32, i int) int64 {
	for {
		ls := int(o.sz[o.l[t]])
		switch {
		case i < ls:
			t = o.l[t]
		case i == ls:
			return o.nu[t]
		default:
			i -= ls + 1
			t = o.r[t]
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
		o.nu[x] = nu
		o.pull(x)
	} else {
		above = o.root
		x = o.alloc(k, nu)
		o.node[k] = x
	}
	above = o.pushDown(above)
	o.root = o.merge(o.merge(x, above), below)
	if int(o.sz[o.root]) > o.m {
		var last int32
		o.root, last = o.split(o.root, o.m)
		delete(o.node, o.key[last])
		o.free = append(o.free, last)
	}
	o.par[o.root] = 0
	return d
}

// pushDown applies the MIN stack update to the entries above the requested
// key: each record moves past the gap of non-records that follows it.
func (o *optStack) pushDown(t int32) int32 {
	n := int(o.sz[t])
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
