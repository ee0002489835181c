package policy

import (
	"slices"
	"sort"
)

// Deliberately naive reference models: slices, linear scans and the
// textbook definition of each policy, nothing clever. The reference-model
// tests feed them and the real policies the same traces and demand the
// same hit/miss sequence.

type refPolicy interface{ access(k uint64) bool }

func newRef(name string, size int, opts Options) refPolicy {
	switch name {
	case "infinite":
		return &refInfinite{seen: map[uint64]bool{}}
	case "min":
		return &refMIN{size: size, trace: opts.Trace}
	case "lru":
		return &refLRU{size: size}
	case "clock", "clock-scatter":
		return &refCLOCK{size: size}
	case "random", "random-scatter":
		return &refRandom{size: size, rng: splitmix{opts.Seed}}
	case "static":
		return newRefStatic(size, opts)
	case "fifo":
		return &refFIFO{size: size}
	case "sieve":
		return &refSIEVE{size: size, visited: map[uint64]bool{}}
	case "s3fifo":
		return newRefS3FIFO(size)
	case "arc":
		return &refARC{c: size}
	case "2q":
		return newRef2Q(size)
	case "wtinylfu":
		return newRefWTinyLFU(size)
	}
	panic("no reference for " + name)
}

// remove deletes the first occurrence of k from s, reporting whether it did.
func remove(s *[]uint64, k uint64) bool {
	i := slices.Index(*s, k)
	if i < 0 {
		return false
	}
	*s = slices.Delete(*s, i, i+1)
	return true
}

type refInfinite struct{ seen map[uint64]bool }

func (r *refInfinite) access(k uint64) bool {
	hit := r.seen[k]
	r.seen[k] = true
	return hit
}

// refMIN scans the rest of the trace for each cached key's next request.
type refMIN struct {
	size  int
	trace []uint64
	pos   int
	cache []uint64
}

func (r *refMIN) access(k uint64) bool {
	pos := r.pos
	r.pos++
	if slices.Contains(r.cache, k) {
		return true
	}
	if len(r.cache) == r.size {
		victim, far := 0, -1
		for i, c := range r.cache {
			next := len(r.trace) // never again: farther than any position
			for j := pos + 1; j < len(r.trace); j++ {
				if r.trace[j] == c {
					next = j
					break
				}
			}
			if next > far {
				victim, far = i, next
			}
		}
		r.cache = slices.Delete(r.cache, victim, victim+1)
	}
	r.cache = append(r.cache, k)
	return false
}

// refLRU: least recent first.
type refLRU struct {
	size int
	keys []uint64
}

func (r *refLRU) access(k uint64) bool {
	hit := remove(&r.keys, k)
	if !hit && len(r.keys) == r.size {
		r.keys = r.keys[1:]
	}
	r.keys = append(r.keys, k)
	return hit
}

type refFIFO struct {
	size int
	keys []uint64
}

func (r *refFIFO) access(k uint64) bool {
	if slices.Contains(r.keys, k) {
		return true
	}
	if len(r.keys) == r.size {
		r.keys = r.keys[1:]
	}
	r.keys = append(r.keys, k)
	return false
}

type refCLOCK struct {
	size  int
	slots []uint64
	marks []bool
	hand  int
}

func (r *refCLOCK) access(k uint64) bool {
	if i := slices.Index(r.slots, k); i >= 0 {
		r.marks[i] = true
		return true
	}
	if len(r.slots) < r.size {
		r.slots = append(r.slots, k)
		r.marks = append(r.marks, false)
		return false
	}
	for r.marks[r.hand] {
		r.marks[r.hand] = false
		r.hand = (r.hand + 1) % r.size
	}
	r.slots[r.hand] = k
	r.hand = (r.hand + 1) % r.size
	return false
}

type refRandom struct {
	size  int
	slots []uint64
	rng   splitmix
}

func (r *refRandom) access(k uint64) bool {
	if slices.Contains(r.slots, k) {
		return true
	}
	if len(r.slots) < r.size {
		r.slots = append(r.slots, k)
		return false
	}
	r.slots[r.rng.intn(r.size)] = k
	return false
}

type refStatic struct {
	charge bool
	set    map[uint64]bool
	seen   map[uint64]bool
}

func newRefStatic(size int, opts Options) *refStatic {
	count := map[uint64]int{}
	first := map[uint64]int{}
	var keys []uint64
	for i, k := range opts.Trace {
		if count[k] == 0 {
			first[k] = i
			keys = append(keys, k)
		}
		count[k]++
	}
	sort.Slice(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if count[ka] != count[kb] {
			return count[ka] > count[kb]
		}
		return first[ka] < first[kb]
	})
	r := &refStatic{charge: opts.ChargeStaticLoads, set: map[uint64]bool{}, seen: map[uint64]bool{}}
	for i := 0; i < size && i < len(keys); i++ {
		r.set[keys[i]] = true
	}
	return r
}

func (r *refStatic) access(k uint64) bool {
	if !r.set[k] {
		return false
	}
	if r.charge && !r.seen[k] {
		r.seen[k] = true
		return false
	}
	return true
}

// refSIEVE: q[0] is the head (newest); the hand is remembered by key.
type refSIEVE struct {
	size    int
	q       []uint64
	visited map[uint64]bool
	hand    uint64
	hasHand bool
}

func (r *refSIEVE) access(k uint64) bool {
	if slices.Contains(r.q, k) {
		r.visited[k] = true
		return true
	}
	if len(r.q) == r.size {
		idx := len(r.q) - 1
		if r.hasHand {
			idx = slices.Index(r.q, r.hand)
		}
		for r.visited[r.q[idx]] {
			r.visited[r.q[idx]] = false
			idx--
			if idx < 0 {
				idx = len(r.q) - 1
			}
		}
		r.hasHand = idx > 0
		if idx > 0 {
			r.hand = r.q[idx-1]
		}
		delete(r.visited, r.q[idx])
		r.q = slices.Delete(r.q, idx, idx+1)
	}
	r.q = slices.Insert(r.q, 0, k)
	r.visited[k] = false
	return false
}

// refS3FIFO follows Algorithm 1 of Yang et al. (SOSP 2023), except that a
// key promoted from S into a full M waits for the next miss to evict from M
// (as libCacheSim does); queues hold oldest first.
type refS3FIFO struct {
	size, S, M, G      int
	small, main, ghost []uint64
	freq               map[uint64]int
}

func newRefS3FIFO(size int) *refS3FIFO {
	s := max(1, size/10)
	return &refS3FIFO{size: size, S: s, M: size - s, G: size * 9 / 10, freq: map[uint64]int{}}
}

func (r *refS3FIFO) access(k uint64) bool {
	if slices.Contains(r.small, k) || slices.Contains(r.main, k) {
		r.freq[k] = min(r.freq[k]+1, 3)
		return true
	}
	ghostHit := remove(&r.ghost, k)
	for len(r.small)+len(r.main) >= r.size {
		r.evict()
	}
	if ghostHit {
		r.main = append(r.main, k)
	} else {
		r.small = append(r.small, k)
	}
	r.freq[k] = 0
	return false
}

func (r *refS3FIFO) evict() {
	if len(r.small) < r.S || len(r.small) == 0 {
		for len(r.main) > 0 {
			t := r.main[0]
			r.main = r.main[1:]
			if r.freq[t] > 0 {
				r.freq[t]--
				r.main = append(r.main, t)
				continue
			}
			delete(r.freq, t)
			return
		}
		return
	}
	for len(r.small) > 0 {
		t := r.small[0]
		r.small = r.small[1:]
		if r.freq[t] >= 2 {
			r.freq[t] = 0
			r.main = append(r.main, t)
			continue
		}
		delete(r.freq, t)
		if r.G > 0 {
			if len(r.ghost) >= r.G {
				r.ghost = r.ghost[1:]
			}
			r.ghost = append(r.ghost, t)
		}
		return
	}
}

// refARC transcribes Figure 4 of Megiddo & Modha, with p and the
// adaptation steps real numbers as written there; lists hold LRU first.
type refARC struct {
	c              int
	p              float64
	t1, t2, b1, b2 []uint64
}

func (r *refARC) replace(inB2 bool) {
	t1 := float64(len(r.t1))
	if len(r.t1) >= 1 && ((inB2 && t1 == r.p) || t1 > r.p) {
		y := r.t1[0]
		r.t1 = r.t1[1:]
		r.b1 = append(r.b1, y)
	} else {
		y := r.t2[0]
		r.t2 = r.t2[1:]
		r.b2 = append(r.b2, y)
	}
}

func (r *refARC) access(x uint64) bool {
	if remove(&r.t1, x) || remove(&r.t2, x) {
		r.t2 = append(r.t2, x)
		return true
	}
	if slices.Contains(r.b1, x) {
		d := 1.0
		if len(r.b1) < len(r.b2) {
			d = float64(len(r.b2)) / float64(len(r.b1))
		}
		r.p = min(r.p+d, float64(r.c))
		r.replace(false)
		remove(&r.b1, x)
		r.t2 = append(r.t2, x)
		return false
	}
	if slices.Contains(r.b2, x) {
		d := 1.0
		if len(r.b2) < len(r.b1) {
			d = float64(len(r.b1)) / float64(len(r.b2))
		}
		r.p = max(r.p-d, 0)
		r.replace(true)
		remove(&r.b2, x)
		r.t2 = append(r.t2, x)
		return false
	}
	l1 := len(r.t1) + len(r.b1)
	l2 := len(r.t2) + len(r.b2)
	if l1 == r.c {
		if len(r.t1) < r.c {
			r.b1 = r.b1[1:]
			r.replace(false)
		} else {
			r.t1 = r.t1[1:]
		}
	} else if l1 < r.c && l1+l2 >= r.c {
		if l1+l2 == 2*r.c {
			r.b2 = r.b2[1:]
		}
		r.replace(false)
	}
	r.t1 = append(r.t1, x)
	return false
}

// ref2Q: A1in and A1out oldest first, Am least recent first.
type ref2Q struct {
	size, kin, kout int
	a1in, a1out, am []uint64
}

func newRef2Q(size int) *ref2Q {
	return &ref2Q{size: size, kin: max(1, size/4), kout: max(1, size/2)}
}

func (r *ref2Q) reclaim() {
	if len(r.a1in)+len(r.am) < r.size {
		return
	}
	if len(r.a1in) > r.kin || len(r.am) == 0 {
		y := r.a1in[0]
		r.a1in = r.a1in[1:]
		r.a1out = append(r.a1out, y)
		if len(r.a1out) > r.kout {
			r.a1out = r.a1out[1:]
		}
		return
	}
	r.am = r.am[1:]
}

func (r *ref2Q) access(x uint64) bool {
	if remove(&r.am, x) {
		r.am = append(r.am, x)
		return true
	}
	if slices.Contains(r.a1in, x) {
		return true
	}
	if remove(&r.a1out, x) {
		r.reclaim()
		r.am = append(r.am, x)
		return false
	}
	r.reclaim()
	r.a1in = append(r.a1in, x)
	return false
}

// refSketch is a count-min sketch with one int per counter, sharing only
// the counter positions (sketchIndexes) with cmSketch.
type refSketch struct {
	counts          []int
	rowBits         uint8
	additions, size int
}

func newRefSketch(size int) *refSketch {
	w := 32
	bits := uint8(5)
	for w < size {
		w *= 2
		bits++
	}
	return &refSketch{counts: make([]int, 4*w), rowBits: bits, size: size}
}

func (s *refSketch) increment(k uint64) {
	added := false
	for _, loc := range sketchIndexes(k, s.rowBits) {
		if s.counts[loc] < 15 {
			s.counts[loc]++
			added = true
		}
	}
	if added {
		s.additions++
		if s.additions >= 10*s.size {
			for i := range s.counts {
				s.counts[i] /= 2
			}
			s.additions /= 2
		}
	}
}

func (s *refSketch) estimate(k uint64) int {
	m := 15
	for _, loc := range sketchIndexes(k, s.rowBits) {
		m = min(m, s.counts[loc])
	}
	return m
}

// refWTinyLFU: lists least recent first.
type refWTinyLFU struct {
	wcap, mcap, pcap             int
	window, probation, protected []uint64
	sk                           *refSketch
}

func newRefWTinyLFU(size int) *refWTinyLFU {
	w := max(1, size/100)
	m := size - w
	return &refWTinyLFU{wcap: w, mcap: m, pcap: m * 8 / 10, sk: newRefSketch(size)}
}

func (r *refWTinyLFU) access(k uint64) bool {
	r.sk.increment(k)
	if remove(&r.window, k) {
		r.window = append(r.window, k)
		return true
	}
	if remove(&r.protected, k) {
		r.protected = append(r.protected, k)
		return true
	}
	if remove(&r.probation, k) {
		r.protected = append(r.protected, k)
		if len(r.protected) > r.pcap {
			d := r.protected[0]
			r.protected = r.protected[1:]
			r.probation = append(r.probation, d)
		}
		return true
	}
	r.window = append(r.window, k)
	if len(r.window) <= r.wcap {
		return false
	}
	cand := r.window[0]
	r.window = r.window[1:]
	if len(r.probation)+len(r.protected) < r.mcap {
		r.probation = append(r.probation, cand)
		return false
	}
	var victim *[]uint64
	switch {
	case len(r.probation) > 0:
		victim = &r.probation
	case len(r.protected) > 0:
		victim = &r.protected
	default:
		return false // candidate evicted
	}
	if r.sk.estimate(cand) > r.sk.estimate((*victim)[0]) {
		*victim = (*victim)[1:]
		r.probation = append(r.probation, cand)
	}
	return false
}
