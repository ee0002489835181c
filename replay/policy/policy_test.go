package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// testTrace is a named request sequence.
type testTrace struct {
	name string
	keys []uint64
}

// randomTrace draws n requests from a universe of u keys. skew > 1 favours
// low key numbers (key = floor(u * r^skew)); scramble maps the key numbers
// to fingerprint-like 64-bit values.
func randomTrace(seed uint64, n, u int, skew float64, scramble bool) []uint64 {
	r := splitmix{seed}
	out := make([]uint64, n)
	for i := range out {
		f := float64(r.next()>>11) / (1 << 53)
		k := uint64(float64(u) * math.Pow(f, skew))
		if scramble {
			k = mix64(k ^ seed)
		}
		out[i] = k
	}
	return out
}

// testTraces returns random traces and, for size k, adversarial ones.
func testTraces(k int) []testTrace {
	var ts []testTrace
	for seed := uint64(1); seed <= 4; seed++ {
		u := 5 + int(seed*11)%46 // 16, 27, 38, 49
		ts = append(ts,
			testTrace{fmt.Sprintf("uniform-s%d-u%d", seed, u), randomTrace(seed, 1500, u, 1, seed%2 == 0)},
			testTrace{fmt.Sprintf("skewed-s%d-u%d", seed, 2*u), randomTrace(seed+100, 1500, 2*u, 3, seed%2 == 1)},
		)
	}
	ts = append(ts, testTrace{"tiny-u5", randomTrace(7, 500, 5, 1, false)})
	var cyc, same, distinct, cyc2 []uint64
	for i := 0; i < 400; i++ {
		cyc = append(cyc, uint64(i%(k+1)))
		cyc2 = append(cyc2, uint64(i%(2*k+1))*0x9E3779B97F4A7C15)
		same = append(same, 42)
		distinct = append(distinct, uint64(i))
	}
	// Scan resistance: a hot set of k/2+1 keys interleaved with a scan.
	var hotscan []uint64
	for i := 0; i < 600; i++ {
		if i%3 == 2 {
			hotscan = append(hotscan, uint64(1000+i))
		} else {
			hotscan = append(hotscan, uint64(i%(k/2+1)))
		}
	}
	return append(ts,
		testTrace{"cyclic-k+1", cyc},
		testTrace{"cyclic-2k+1", cyc2},
		testTrace{"all-same", same},
		testTrace{"all-distinct", distinct},
		testTrace{"hot+scan", hotscan},
	)
}

func mustNew(t testing.TB, name string, size int, opts Options) Policy {
	t.Helper()
	p, err := New(name, size, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// oneByOneHits is the hits of access called on each of keys in turn: what
// AccessBatch(keys) must return.
func oneByOneHits(access func(uint64) bool, keys []uint64) int {
	hits := 0
	for _, k := range keys {
		if access(k) {
			hits++
		}
	}
	return hits
}

// TestReferenceModels checks every policy hit by hit against its naive model.
func TestReferenceModels(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for size := 1; size <= 16; size++ {
				for _, tr := range testTraces(size) {
					for _, charge := range []bool{false, true} {
						if charge && name != "static" {
							continue
						}
						opts := Options{Seed: uint64(size) * 7, Trace: tr.keys, ChargeStaticLoads: charge}
						p := mustNew(t, name, size, opts)
						ref := newRef(name, size, opts)
						for i, k := range tr.keys {
							got, want := p.Access(k), ref.access(k)
							if got != want {
								t.Fatalf("size %d, trace %s (charge=%v): request %d (key %#x): hit=%v, reference says %v",
									size, tr.name, charge, i, k, got, want)
							}
							if name != "infinite" && p.Len() > size {
								t.Fatalf("size %d, trace %s: Len() = %d after request %d", size, tr.name, p.Len(), i)
							}
						}
					}
				}
			}
		})
	}
}

func misses(p Policy, trace []uint64) int {
	m := 0
	for _, k := range trace {
		if !p.Access(k) {
			m++
		}
	}
	return m
}

// hitSeq returns the hit/miss sequence of p over trace.
func hitSeq(p Policy, trace []uint64) []bool {
	out := make([]bool, len(trace))
	for i, k := range trace {
		out[i] = p.Access(k)
	}
	return out
}

func TestInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		trace := randomTrace(seed, 3000, 20+int(seed)*30, 1+float64(seed%3), seed%2 == 0)
		distinct := map[uint64]bool{}
		for _, k := range trace {
			distinct[k] = true
		}
		if got := misses(mustNew(t, "infinite", 0, Options{}), trace); got != len(distinct) {
			t.Errorf("seed %d: infinite misses = %d, want %d distinct keys", seed, got, len(distinct))
		}
		prevLRU := []bool(nil)
		prevLRUMisses := math.MaxInt
		for _, size := range []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89} {
			opts := Options{Trace: trace, Seed: seed}
			minMisses := misses(mustNew(t, "min", size, opts), trace)
			for _, name := range Names() {
				if name == "infinite" || name == "static" {
					// Not demand-paging caches of size k: INFINITE is
					// unbounded, and STATIC may decline to admit a key,
					// which can beat a MIN that must admit every miss.
					continue
				}
				m := misses(mustNew(t, name, size, opts), trace)
				if m < minMisses {
					t.Errorf("seed %d size %d: %s misses %d < MIN's %d", seed, size, name, m, minMisses)
				}
			}
			// LRU inclusion: every hit at size k is a hit at size k+1.
			for _, sz := range []int{size, size + 1} {
				seq := hitSeq(NewLRU(sz), trace)
				if prevLRU != nil && sz == size+1 {
					for i := range seq {
						if prevLRU[i] && !seq[i] {
							t.Fatalf("seed %d: request %d hits LRU(%d) but misses LRU(%d)", seed, i, size, sz)
						}
					}
				}
				prevLRU = seq
			}
			m := misses(NewLRU(size), trace)
			if m > prevLRUMisses {
				t.Errorf("seed %d: LRU misses rose to %d at size %d", seed, m, size)
			}
			prevLRUMisses = m
		}
	}
}

// TestBeladyTextbook pins the classic page-replacement exercise: 20
// references, 3 frames.
func TestBeladyTextbook(t *testing.T) {
	ref := []uint64{7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1}
	for _, c := range []struct {
		name string
		want int
	}{{"min", 9}, {"fifo", 15}, {"lru", 12}, {"infinite", 6}} {
		if got := misses(mustNew(t, c.name, 3, Options{Trace: ref}), ref); got != c.want {
			t.Errorf("%s: %d page faults, want %d", c.name, got, c.want)
		}
	}
}

func TestScatterMatchesFlat(t *testing.T) {
	for _, size := range []int{1, 2, 7, 64, 1000} {
		trace := randomTrace(uint64(size), 50000, 3*size+10, 2, true)
		for _, pair := range [][2]string{{"clock", "clock-scatter"}, {"random", "random-scatter"}} {
			opts := Options{Seed: 99}
			a := hitSeq(mustNew(t, pair[0], size, opts), trace)
			b := hitSeq(mustNew(t, pair[1], size, opts), trace)
			if i := slices.Index(diff(a, b), true); i >= 0 {
				t.Fatalf("size %d: %s and %s differ at request %d", size, pair[0], pair[1], i)
			}
		}
	}
}

func diff(a, b []bool) []bool {
	d := make([]bool, len(a))
	for i := range a {
		d[i] = a[i] != b[i]
	}
	return d
}

func TestRandomSeeds(t *testing.T) {
	trace := randomTrace(5, 20000, 200, 1, true)
	a := hitSeq(NewRandom(50, 1), trace)
	b := hitSeq(NewRandom(50, 1), trace)
	c := hitSeq(NewRandom(50, 2), trace)
	if !slices.Equal(a, b) {
		t.Error("same seed, different hit sequences")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, identical hit sequences")
	}
	// Uniform keys over a universe of u with a cache of k: every policy
	// that ignores the key hits about k/u of the time.
	hits := 0
	for _, h := range a {
		if h {
			hits++
		}
	}
	if r := float64(hits) / float64(len(a)); math.Abs(r-0.25) > 0.03 {
		t.Errorf("random hit ratio %.3f on uniform 200 keys with 50 slots, want about 0.25", r)
	}
}

func TestSplitmixUniform(t *testing.T) {
	r := splitmix{3}
	var counts [10]int
	const n = 100000
	for i := 0; i < n; i++ {
		counts[r.intn(10)]++
	}
	for v, c := range counts {
		if c < n/10-600 || c > n/10+600 { // about 6 standard deviations
			t.Errorf("intn(10) returned %d %d times of %d", v, c, n)
		}
	}
	// Pinned: victims must not change under a refactoring.
	r = splitmix{0}
	if got := r.next(); got != 0xe220a8397b1dcdaf {
		t.Errorf("splitmix{0}.next() = %#x, want 0xe220a8397b1dcdaf", got)
	}
}

func TestNextUse(t *testing.T) {
	got := NextUse([]uint64{5, 6, 5, 7, 6, 5})
	want := []int64{2, 4, 5, -1, -1, -1}
	if !slices.Equal(got, want) {
		t.Errorf("NextUse = %v, want %v", got, want)
	}
	if len(NextUse(nil)) != 0 {
		t.Error("NextUse(nil) not empty")
	}
	// Against a forward scan, on a trace with more keys than the table's
	// first size, so it grows.
	r := splitmix{9}
	long := make([]uint64, 30000)
	for i := range long {
		long[i] = r.next() % 12000
	}
	nu := NextUse(long)
	nu32, err := NextUse32Cancel(long, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range long {
		j := i + 1
		for j < len(long) && long[j] != k {
			j++
		}
		want32 := uint32(j)
		if j == len(long) {
			j, want32 = -1, NoNextUse
		}
		if nu32[i] != want32 {
			t.Fatalf("NextUse32Cancel[%d] = %d, want %d", i, nu32[i], want32)
		}
		if nu[i] != int64(j) {
			t.Fatalf("NextUse[%d] = %d, forward scan says %d", i, nu[i], j)
		}
	}
	// Given NextUse must agree with computed.
	trace := randomTrace(1, 2000, 40, 2, true)
	a := hitSeq(mustNew(t, "min", 8, Options{Trace: trace}), trace)
	b := hitSeq(mustNew(t, "min", 8, Options{Trace: trace, NextUse: NextUse(trace)}), trace)
	if !slices.Equal(a, b) {
		t.Error("MIN with supplied NextUse differs from computed")
	}
	if _, err := New("min", 8, Options{Trace: trace, NextUse: make([]int64, 3)}); err == nil {
		t.Error("MIN accepted a NextUse of the wrong length")
	}
}

func TestMINOutOfOrderPanics(t *testing.T) {
	p := mustNew(t, "min", 2, Options{Trace: []uint64{1, 2}})
	p.Access(1)
	func() {
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), "position 1") {
				t.Errorf("out-of-order Access: recovered %v", r)
			}
		}()
		p.Access(3)
	}()
	p.Access(2)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Access past the end of the trace did not panic")
			}
		}()
		p.Access(1)
	}()
}

func TestStatic(t *testing.T) {
	trace := []uint64{3, 1, 2, 2, 1, 9, 9, 4}
	// counts: 1:2, 2:2, 9:2, 3:1, 4:1; ties by first occurrence: 1, 2, 9.
	p := mustNew(t, "static", 2, Options{Trace: trace})
	got := hitSeq(p, trace)
	want := []bool{false, true, true, true, true, false, false, false}
	if !slices.Equal(got, want) {
		t.Errorf("static hits %v, want %v", got, want)
	}
	if p.Len() != 2 {
		t.Errorf("Len = %d", p.Len())
	}
	p = mustNew(t, "static", 2, Options{Trace: trace, ChargeStaticLoads: true})
	got = hitSeq(p, trace)
	want = []bool{false, false, false, true, true, false, false, false}
	if !slices.Equal(got, want) {
		t.Errorf("charged static hits %v, want %v", got, want)
	}
	if p := mustNew(t, "static", 100, Options{Trace: trace}); p.Len() != 5 {
		t.Errorf("static Len = %d with 5 distinct keys", p.Len())
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"infinite", "min", "lru", "clock", "random", "static", "fifo", "sieve",
		"s3fifo", "arc", "2q", "wtinylfu", "clock-scatter", "random-scatter"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v", got)
	}
	for _, name := range Names() {
		p, err := New(strings.ToUpper(name), 4, Options{Trace: []uint64{}})
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if p.Name() != name || p.Len() != 0 {
			t.Errorf("New(%q): Name %q, Len %d", name, p.Name(), p.Len())
		}
		_, err = New(name, 0, Options{Trace: []uint64{}})
		if (err == nil) != (name == "infinite") {
			t.Errorf("New(%q, 0): err = %v", name, err)
		}
	}
	if _, err := New("lru", MaxSize+1, Options{}); err == nil {
		t.Error("New accepted a size above MaxSize")
	}
	_, err := New("lfu", 4, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), `policy: unknown policy "lfu" (known: infinite, min, lru,`) {
		t.Errorf("unknown policy error: %v", err)
	}
	for _, name := range []string{"min", "static"} {
		if _, err := New(name, 4, Options{}); err == nil {
			t.Errorf("%s without a trace: no error", name)
		}
	}
}

type memSizer interface{ memBytes() int }

func TestMemoryPerEntry(t *testing.T) {
	for _, size := range []int{1, 3, 100, 1000, 5000} {
		// All-distinct keys fill every cache and the ghost lists of s3fifo
		// and 2q; arc needs re-requests to fill B1 and B2.
		distinct := make([]uint64, 3*size)
		for i := range distinct {
			distinct[i] = uint64(i)
		}
		mixed := randomTrace(uint64(size), 40*size, 4*size, 1, true)
		for _, name := range Names() {
			trace := distinct
			if name == "arc" {
				trace = mixed
			}
			p := mustNew(t, name, size, Options{Trace: trace})
			if name == "infinite" {
				trace = trace[:size]
			}
			for _, k := range trace {
				p.Access(k)
			}
			got := float64(p.(memSizer).memBytes()) / float64(size)
			if want := MemoryPerEntry(name, size); got != want {
				t.Errorf("%s at %d: structures take %.3f bytes/entry, MemoryPerEntry says %.3f", name, size, got, want)
			}
		}
	}
	if MemoryPerEntry("nope", 10) != 0 || MemoryPerEntry("lru", 0) != 0 {
		t.Error("MemoryPerEntry of an unknown name or size 0 is not 0")
	}
	// A cache far larger than its keys costs what those keys cost: its
	// structures grow as keys arrive, never to the nominal size (only
	// W-TinyLFU's sketch, 2 bytes per nominal entry, is sized up front).
	const big, keys = 1 << 22, 3000
	trace := randomTrace(7, 4*keys, keys, 1, true)
	for _, name := range Names() {
		p := mustNew(t, name, big, Options{Trace: trace})
		for _, k := range trace {
			p.Access(k)
		}
		got := p.(memSizer).memBytes()
		limit := int(MemoryPerEntry(name, 2*keys)*2*keys) + 2*tableBytes(tableStart)
		if name == "wtinylfu" {
			limit += sketchBytes(big)
		}
		if got > limit {
			t.Errorf("%s(2^22) holding %d keys takes %d bytes, more than %d", name, p.Len(), got, limit)
		}
	}
}

// TestTable drives the hash table and a Go map with the same random
// operations, including deletes that exercise backward shifting.
func TestTable(t *testing.T) {
	for _, u := range []uint64{10, 100, 5000} {
		r := splitmix{u}
		tb := newTable(4)
		m := map[uint64]int{}
		for i := 0; i < 200000; i++ {
			k := r.next() % u
			if u == 5000 {
				k *= 1 << 40 // keys that agree in their low bits
			}
			switch r.intn(5) {
			case 4:
				v := r.intn(1000)
				old, ok := tb.swap(k, v)
				mv, mok := m[k]
				if ok != mok || (ok && old != mv) {
					t.Fatalf("u=%d op %d: swap(%d) = %d,%v, map says %d,%v", u, i, k, old, ok, mv, mok)
				}
				m[k] = v
			case 0:
				v := r.intn(1000)
				tb.put(k, v)
				m[k] = v
			case 3:
				// find, then putAt the free slot it gave when there is
				// room (as a full cache's table has), else put.
				v, free, ok := tb.find(k)
				mv, mok := m[k]
				if ok != mok || (ok && v != mv) {
					t.Fatalf("u=%d op %d: find(%d) = %d,%v, map says %d,%v", u, i, k, v, ok, mv, mok)
				}
				if !ok {
					nv := r.intn(1000)
					if tb.len()+1 < len(tb.slots) {
						tb.putAt(free, k, nv)
					} else {
						tb.put(k, nv)
					}
					m[k] = nv
				}
			case 1:
				_, inMap := m[k]
				if got := tb.del(k); got != inMap {
					t.Fatalf("u=%d op %d: del(%d) = %v, map says %v", u, i, k, got, inMap)
				}
				delete(m, k)
			default:
				v, ok := tb.get(k)
				mv, mok := m[k]
				if ok != mok || v != mv {
					t.Fatalf("u=%d op %d: get(%d) = %d,%v, map says %d,%v", u, i, k, v, ok, mv, mok)
				}
			}
			if tb.len() != len(m) {
				t.Fatalf("u=%d op %d: len %d, map %d", u, i, tb.len(), len(m))
			}
		}
		for k, v := range m {
			if got, ok := tb.get(k); !ok || got != v {
				t.Fatalf("u=%d: final get(%d) = %d,%v, want %d", u, k, got, ok, v)
			}
		}
	}
}

func TestSketch(t *testing.T) {
	for _, size := range []int{1, 20, 300} {
		s, ref := newSketch(size), newRefSketch(size)
		trace := randomTrace(uint64(size), 20000, 3*size+5, 2, true)
		for i, k := range trace {
			s.increment(k)
			ref.increment(k)
			if s.estimate(k) != ref.estimate(k) || s.additions != ref.additions {
				t.Fatalf("size %d request %d: estimate %d additions %d, reference %d %d",
					size, i, s.estimate(k), s.additions, ref.estimate(k), ref.additions)
			}
		}
	}
}

// TestNoAllocs checks that steady-state accesses allocate nothing.
func TestNoAllocs(t *testing.T) {
	trace := randomTrace(9, 4096, 3000, 2, true)
	for _, name := range Names() {
		p := mustNew(t, name, 512, Options{Trace: trace})
		i := 0
		if name != "min" {
			for _, k := range trace { // warm up
				p.Access(k)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() {
			p.Access(trace[i%len(trace)])
			i++
		})
		if name == "infinite" {
			continue // grows with the number of distinct keys by design
		}
		if allocs != 0 {
			t.Errorf("%s: %.2f allocations per access", name, allocs)
		}
	}
}

// FuzzReferenceModels compares every policy with its reference model on
// arbitrary short traces: data[0] picks the size (1..16), every further
// byte is a request for key byte%24.
func FuzzReferenceModels(f *testing.F) {
	f.Add([]byte{3, 7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1})
	f.Add([]byte{1, 1, 2, 1, 2, 1, 2})
	f.Add([]byte{5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 9, 9, 9, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		size := int(data[0])%16 + 1
		trace := make([]uint64, len(data)-1)
		for i, b := range data[1:] {
			trace[i] = uint64(b % 24)
		}
		for _, name := range Names() {
			opts := Options{Seed: uint64(data[0]), Trace: trace, ChargeStaticLoads: data[0]&1 == 1}
			p := mustNew(t, name, size, opts)
			ref := newRef(name, size, opts)
			for i, k := range trace {
				if got, want := p.Access(k), ref.access(k); got != want {
					t.Fatalf("%s size %d: request %d (key %d): hit=%v, reference says %v", name, size, i, k, got, want)
				}
			}
		}
	})
}

// AccessBatch is Access on each key: the same hits, batch by batch, and
// the same state after (the next batch agrees too), at sizes whose tables
// are below and above prefetchSlots.
func TestAccessBatch(t *testing.T) {
	r := splitmix{5}
	trace := make([]uint64, 300000)
	for i := range trace {
		// Zipf-like: small keys often, large keys rarely.
		trace[i] = r.next() % (1 + r.next()%120000)
	}
	var batchers []string
	for _, name := range Names() {
		for _, size := range []int{7, 1000, 40000} {
			a := mustNew(t, name, size, Options{Seed: 3, Trace: trace})
			b := mustNew(t, name, size, Options{Seed: 3, Trace: trace})
			batch, ok := b.(Batcher)
			if !ok {
				continue
			}
			if size == 7 {
				batchers = append(batchers, name)
			}
			for lo := 0; lo < len(trace); lo += 70001 {
				keys := trace[lo:min(lo+70001, len(trace))]
				want := oneByOneHits(a.Access, keys)
				if got := batch.AccessBatch(keys); got != want {
					t.Fatalf("%s size %d, batch at %d: AccessBatch hits %d, Access %d", name, size, lo, got, want)
				}
			}
		}
	}
	if want := []string{"lru", "clock", "random", "fifo", "sieve", "s3fifo", "arc"}; len(batchers) != len(want) {
		t.Errorf("Batchers %v, want %v", batchers, want)
	}
}
