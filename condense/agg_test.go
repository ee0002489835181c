package condense

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// spillOnly has the runs of a test spill from the start, as runs whose
// distinct URLs outgrow memory do.
func spillOnly(t *testing.T) {
	t.Helper()
	setForTest(t, &testAggLimit, -1)
}

// setForTest sets *p, one of the package's tuning variables, to v until t
// and its subtests end.
func setForTest[T any](t *testing.T, p *T, v T) {
	t.Helper()
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// checkBrute compares a report with a brute-force map's counts and
// colliding pairs, per node and in total.
func checkBrute(t *testing.T, rep *Report, recs [][]tracefile.URLRecord, h fingerprint.Hasher) {
	t.Helper()
	var all []tracefile.URLRecord
	for n, r := range recs {
		all = append(all, r...)
		u, f, p := bruteForce(r, h)
		if nr := rep.PerNode[n]; nr.DistinctURLs != u || nr.DistinctFPs != f || !reflect.DeepEqual(pairSet(nr.Collisions), p) {
			t.Errorf("node %d: %d/%d/%d pairs, want %d/%d/%d", n, nr.DistinctURLs, nr.DistinctFPs, len(nr.Collisions), u, f, len(p))
		}
	}
	urls, fps, pairs := bruteForce(all, h)
	if rep.Total.DistinctURLs != urls || rep.Total.DistinctFPs != fps || !reflect.DeepEqual(pairSet(rep.Total.Collisions), pairs) {
		t.Errorf("total urls/fps/pairs %d/%d/%d, want %d/%d/%d", rep.Total.DistinctURLs, rep.Total.DistinctFPs, len(rep.Total.Collisions), urls, fps, len(pairs))
	}
}

// checkBruteAt16 is checkBrute at 16 bits on recs, which must hold at
// least 10 colliding pairs for the check to mean something; it returns
// their number.
func checkBruteAt16(t *testing.T, rep *Report, recs [][]tracefile.URLRecord) int {
	t.Helper()
	h, _ := fingerprint.New(0, 16)
	_, _, pairs := bruteForce(slices.Concat(recs...), h)
	if len(pairs) < 10 {
		t.Fatalf("fixture too small: only %d pairs", len(pairs))
	}
	checkBrute(t, rep, recs, h)
	return len(pairs)
}

// A run whose distinct URLs fit counts them in memory, spilling nothing,
// and counts what a brute-force map counts: at 16 bits, with many
// colliding fingerprints, on 1 to 3 workers; and what a spilling run
// counts.
func TestInMemoryCountsExactly(t *testing.T) {
	in := t.TempDir()
	recs := makeCrawl(t, in, 4, 6000, 9000, 21)
	h, _ := fingerprint.New(0, 16)
	var reps []*Report
	for _, w := range []int{1, 2, 3} {
		rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: w})
		if !rep.InMemory || rep.SpilledRecords != 0 {
			t.Fatalf("%d workers: in memory %v, %d records spilled", w, rep.InMemory, rep.SpilledRecords)
		}
		checkBrute(t, rep, recs, h)
		reps = append(reps, rep)
	}
	if _, _, pairs := bruteForce(slices.Concat(recs...), h); len(pairs) < 50 {
		t.Fatalf("fixture too small: only %d pairs", len(pairs))
	}
	spillOnly(t)
	spilled := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: 2})
	if spilled.InMemory || spilled.SpilledRecords == 0 {
		t.Fatalf("spilling run: in memory %v, %d records spilled", spilled.InMemory, spilled.SpilledRecords)
	}
	for _, rep := range reps {
		if !reflect.DeepEqual(comparable(rep), comparable(spilled)) {
			t.Errorf("in memory and spilled reports differ:\n%+v\n%+v", rep.Total, spilled.Total)
		}
	}
}

// A table that outgrows its limit in the middle of a run is spilled, with
// the rows after it, and the other workers' tables at the end: the counts
// are the brute force's all the same.
func TestInMemoryOverflowSpillsExactly(t *testing.T) {
	in := t.TempDir()
	recs := makeCrawl(t, in, 3, 20000, 30000, 22)
	h, _ := fingerprint.New(0, 16)
	old := testAggLimit
	defer func() { testAggLimit = old }()
	for _, w := range []int{1, 2, 3} {
		// An empty table is its slots and a chunk per worker; this leaves
		// room for the slots of a few thousand URLs.
		testAggLimit = aggEmpty + int64(w)*aggPerWorker + 64<<10
		rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: w})
		if rep.InMemory || rep.SpilledRecords == 0 {
			t.Fatalf("%d workers: in memory %v, %d records spilled: want a spill", w, rep.InMemory, rep.SpilledRecords)
		}
		checkBrute(t, rep, recs, h)
	}
}

// The table against a map: every URL added once is there with the set of
// nodes that added it, a fingerprint with two URLs is marked colliding,
// and a dump writes one record per URL and node.
func TestAggTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h, _ := fingerprint.New(0, 12) // many collisions
	tab := newAggTable(2, 12, 1<<30, 0)
	want := map[string]uint64{} // URL -> node set
	byFP := map[uint64]map[string]bool{}
	for i := 0; i < 40000; i++ {
		u := fmt.Sprintf("http://h%d.test/%d", rng.IntN(50), rng.IntN(300))
		if rng.IntN(100) == 0 {
			u += string(make([]byte, aggOwnChunk)) // a copy in a chunk of its own
		}
		node := rng.IntN(aggMaxNodes)
		fp := h.String(u)
		loc, ok := tab.add(i%2, fp, node, u)
		if !ok || tab.url(loc) != u {
			t.Fatalf("add %q: ok %v, copy %q", u, ok, tab.url(loc))
		}
		want[u] |= 1 << node
		if byFP[fp] == nil {
			byFP[fp] = map[string]bool{}
		}
		byFP[fp][u] = true
	}
	got := map[string]uint64{}
	colliding := map[uint64]bool{}
	for p := range tab.parts {
		for _, s := range tab.parts[p].cur.Load().s {
			if s.ref != 0 {
				u := tab.url(s.ref >> 16)
				if _, dup := got[u]; dup {
					t.Fatalf("%q held twice", u)
				}
				got[u] = s.ref & 0xffff
			}
		}
		for fp := range tab.parts[p].colliding {
			colliding[fp] = true
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("table holds %d URLs, want %d (or node sets differ)", len(got), len(want))
	}
	for fp, us := range byFP {
		if colliding[fp] != (len(us) > 1) {
			t.Errorf("fingerprint %x: colliding %v with %d URLs", fp, colliding[fp], len(us))
		}
	}
	var sum int64
	for _, set := range want {
		sum += int64(popcount(set))
	}
	w, err := newBucketWriter(filepath.Join(t.TempDir(), bucketFileName(0)), 4, 4<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer w.abort()
	n, err := tab.dump(w, func(fp uint64) int { return int(fp % 4) })
	if err != nil || n != sum {
		t.Errorf("dump wrote %d records (%v), want %d", n, err, sum)
	}
}

// A copy spans no more cache lines than its length needs (its first line
// is the one a prefetch hint fetches), whatever the lengths before it.
func TestAggCopiesAligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tab := newAggTable(1, 64, 1<<30, 0)
	defer tab.release()
	for i := 0; i < 20000; i++ {
		u := fmt.Sprintf("http://h.test/%d/", i) + strings.Repeat("x", rng.IntN(300))
		loc, ok := tab.add(0, fingerprint.URL(u), 0, u)
		if !ok || tab.url(loc) != u {
			t.Fatalf("add %q: ok %v", u, ok)
		}
		start, size := tab.addr(loc), uintptr(uvarintLen(len(u))+len(u))
		if lines, least := (start+size-1)/64-start/64+1, (size+63)/64; lines != least {
			t.Fatalf("a copy of %d bytes at line offset %d spans %d lines, not %d", size, start%64, lines, least)
		}
		// The prefetch hints for it: its start, then every other line
		// it takes, each once.
		hints := tab.copyLines(loc, len(u), nil)
		if hints[0] != start {
			t.Fatalf("first hint %#x, copy at %#x", hints[0], start)
		}
		for l := start &^ 63; l <= (start+size-1)&^63; l += 64 {
			if l != start&^63 && !slices.Contains(hints, l) {
				t.Fatalf("copy of %d bytes at %#x: no hint for line %#x in %#x", size, start, l, hints)
			}
		}
		if want := int((start+size-1)/64 - start/64 + 1); len(hints) != want {
			t.Fatalf("copy of %d bytes at %#x: %d hints %#x, want %d", size, start, len(hints), hints, want)
		}
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// A table refuses what does not fit its limit, and says it is full.
func TestAggTableLimit(t *testing.T) {
	tab := newAggTable(1, 64, aggEmpty+aggPerWorker+aggChunkSize, 0)
	var n int
	for ; n < 1e6; n++ {
		u := fmt.Sprintf("http://example.test/page/%d", n)
		if _, ok := tab.add(0, fingerprint.URL(u), 0, u); !ok {
			break
		}
	}
	if n == 0 || n == 1e6 || !tab.full() {
		t.Fatalf("%d URLs added within %d bytes, full %v", n, tab.limit, tab.full())
	}
}

// Where the recent-URL table drops too few rows (the gate would bypass
// the filter) and the table is not on course to hold every URL of the
// run, the workers stop counting in memory and spill early, the table
// included, before it is full; where it is on course to hold them, they
// go on counting in memory. The counts are the brute force's either way.
func TestGateSwitchesToSpilling(t *testing.T) {
	in := t.TempDir()
	recs := makeCrawl(t, in, 3, 6000, 40000, 23) // few repeats
	setForTest(t, &gateWindow, 700)
	setForTest(t, &gateBypass, 2000)
	old := testAggLimit
	defer func() { testAggLimit = old }()
	h, _ := fingerprint.New(0, 16)
	for _, w := range []int{1, 2} {
		// Room for the slots of a few thousand URLs, but not for the
		// copies of the run's 18,000: the table is never full (its parts
		// of 64 slots hold about 23 URLs each, and the workers' first
		// chunks their copies), but the projection does not fit.
		testAggLimit = aggEmpty + int64(w)*aggPerWorker + 64<<10
		rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: w})
		if rep.InMemory || rep.SpilledRecords == 0 || rep.UnfilteredRows == 0 {
			t.Fatalf("%d workers, small table: in memory %v, %d records spilled, %d unfiltered: want a switch to spilling", w, rep.InMemory, rep.SpilledRecords, rep.UnfilteredRows)
		}
		checkBrute(t, rep, recs, h)
		testAggLimit = 0
		rep = mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: w})
		if !rep.InMemory || rep.SpilledRecords != 0 || rep.UnfilteredRows != 0 {
			t.Fatalf("%d workers, a table that holds the run: in memory %v, %d records spilled, %d unfiltered: want it counted in memory", w, rep.InMemory, rep.SpilledRecords, rep.UnfilteredRows)
		}
		checkBrute(t, rep, recs, h)
	}
}

// A trace of few repeats whose URLs the table is not on course to hold:
// the workers leave the table at the recent-URL table's first verdict and
// spill every row after it with no repeat filter, keeping the spill's
// blocks in memory. The counts are the brute force's.
func TestFewRepeatsSpillUnfiltered(t *testing.T) {
	in := t.TempDir()
	const nodes, rows = 3, 6000
	recs := makeCrawl(t, in, nodes, rows, 4_000_000, 29) // its hot set too large to repeat much
	setForTest(t, &recentWindow, 500)
	setForTest(t, &recentBypass, 4000)
	setForTest(t, &fewSwitch, true)
	var kept, written int
	setForTest(t, &testAfterMap, func(k, w rangeChunks) {
		for _, cs := range k {
			kept += len(cs)
		}
		for _, cs := range w {
			written += len(cs)
		}
	})
	h, _ := fingerprint.New(0, 16)
	for _, w := range []int{1, 2} {
		kept, written = 0, 0
		setForTest(t, &testAggLimit, aggEmpty+int64(w)*aggPerWorker+64<<10)
		rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: w})
		// Each worker counts in the table until its first verdict, one
		// or two batches of 500 rows a worker.
		if rep.InMemory || rep.UnfilteredRows < nodes*rows-2000*int64(w) || rep.SpilledRecords < rep.UnfilteredRows {
			t.Fatalf("%d workers: in memory %v, %d rows unfiltered, %d records spilled: want every row after the first 500 or 1,000 of each worker spilled unfiltered", w, rep.InMemory, rep.UnfilteredRows, rep.SpilledRecords)
		}
		if kept == 0 {
			t.Fatalf("%d workers: %d blocks kept in memory, %d written: want blocks kept", w, kept, written)
		}
		checkBrute(t, rep, recs, h)
	}
}

// A trace of few repeats whose table is on course to hold it, but near
// its limit: the early projection still falls either side of the limit,
// so the workers spill as they do when it is off course. With a quarter
// of the limit to spare they count it all in the table.
func TestFewRepeatsNearTheLimitSpill(t *testing.T) {
	in := t.TempDir()
	const nodes, rows = 3, 6000
	recs := makeCrawl(t, in, nodes, rows, 4_000_000, 29)
	setForTest(t, &recentWindow, 500)
	setForTest(t, &recentBypass, 4000)
	setForTest(t, &fewSwitch, true)
	var first int64
	setForTest(t, &testRoomy, func(p, limit int64) {
		if first == 0 {
			first = p
		}
	})
	h, _ := fingerprint.New(0, 16)
	// One worker, so that the verdict comes at the same row every run:
	// first learn the projection there, then place the limit around it.
	setForTest(t, &testAggLimit, 1<<30)
	if rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: 1}); !rep.InMemory {
		t.Fatalf("a 1 GiB table: spilled %d records", rep.SpilledRecords)
	}
	if first == 0 {
		t.Fatal("no projection was judged")
	}
	p := first
	for _, tc := range []struct {
		limit   int64
		inTable bool
	}{{p + p/10, false}, {p*3/2 + 1, true}} {
		first = 0
		testAggLimit = tc.limit
		rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: 1})
		if first != p {
			t.Fatalf("limit %d: the projection was %d, %d before", tc.limit, first, p)
		}
		if rep.InMemory != tc.inTable || (!tc.inTable && rep.UnfilteredRows == 0) {
			t.Fatalf("projection %d, limit %d: in memory %v, %d rows spilled unfiltered; want in memory %v", p, tc.limit, rep.InMemory, rep.UnfilteredRows, tc.inTable)
		}
		checkBrute(t, rep, recs, h)
	}
}

// The projection is the base plus what the URLs so far take, scaled to
// the whole run.
func TestAggProjected(t *testing.T) {
	tab := newAggTable(2, 64, 1<<30, 0)
	defer tab.release()
	if got := tab.projected(0, 100); got != math.MaxInt64 {
		t.Errorf("nothing read: %d", got)
	}
	if got := tab.projected(10, 100); got != tab.base {
		t.Errorf("no URL yet: %d, want the base %d", got, tab.base)
	}
	var copied int64
	for i := range 100 {
		u := fmt.Sprintf("http://h%d.test/%d", i%2, i)
		if _, ok := tab.add(i%2, fingerprint.URL(u), 0, u); !ok {
			t.Fatal("refused")
		}
		copied += int64(uvarintLen(len(u)) + len(u))
	}
	per := copied + 100*aggSlotsPerURL
	// Alignment pads some copies: at most a line each.
	for _, c := range []struct{ read, total int64 }{{1000, 1000}, {1000, 4000}, {2000, 1000}} {
		got := tab.projected(c.read, c.total)
		lo := tab.base + per*max(c.total, c.read)/c.read
		hi := lo + 100*64*max(c.total, c.read)/c.read
		if got < lo || got > hi {
			t.Errorf("read %d of %d: projected %d, want %d..%d", c.read, c.total, got, lo, hi)
		}
	}
}

// size moves every part into slots for the URLs projected, once, and
// keeps every URL with its copy and node set.
func TestAggSize(t *testing.T) {
	tab := newAggTable(2, 64, 1<<30, 0)
	defer tab.release()
	locs := map[string]uint64{}
	for i := range 5000 {
		u := fmt.Sprintf("http://h%d.test/%d", i%7, i)
		loc, ok := tab.add(i%2, fingerprint.URL(u), i%3, u)
		if !ok {
			t.Fatal("refused")
		}
		locs[u] = loc
	}
	before := tab.bytes.Load()
	tab.size(190000) // 190,000 URLs at 3/4: 1024 slots a part
	if tab.sized == nil {
		t.Fatal("not sized")
	}
	for i := range tab.parts {
		if n := len(tab.parts[i].cur.Load().s); n != 1024 {
			t.Fatalf("part %d: %d slots after size, want 1024", i, n)
		}
	}
	if got := tab.bytes.Load() - before; got != 1024*aggParts*aggSlotSize {
		t.Errorf("size added %d bytes, want %d", got, 1024*aggParts*aggSlotSize)
	}
	tab.size(1 << 22) // once per table
	if n := len(tab.parts[0].cur.Load().s); n != 1024 {
		t.Errorf("sized again: %d slots", n)
	}
	for i := range 5000 {
		u := fmt.Sprintf("http://h%d.test/%d", i%7, i)
		fp := fingerprint.URL(u)
		loc, set := lookupAgg(tab, fp, u)
		if loc != locs[u] {
			t.Fatalf("%s: at %d after size, was %d", u, loc, locs[u])
		}
		if set != 1<<uint(i%3) {
			t.Fatalf("%s: nodes %b after size, want %b", u, set, 1<<uint(i%3))
		}
	}
}

// lookupAgg finds u in its part's slots as they are: where its copy is
// and its node set (0, 0: not there).
func lookupAgg(tab *aggTable, fp uint64, u string) (loc, set uint64) {
	h := tab.hash(fp)
	ss := tab.part(h).cur.Load()
	for i := ss.home(h); ss.s[i].ref != 0; i = (i + 1) & (len(ss.s) - 1) {
		if s := ss.s[i]; s.fp == fp && tab.url(s.ref>>16) == u {
			return s.ref >> 16, s.ref & 0xffff
		}
	}
	return 0, 0
}

// Rows handed to their parts' owners are counted as the brute force
// counts them, on 2 and 3 workers, whether the table holds the run or
// fills in the middle of it (then an owner refuses rows that their
// worker spills).
func TestExchangeCountsExactly(t *testing.T) {
	in := t.TempDir()
	recs := makeCrawl(t, in, 4, 20000, 30000, 23)
	h, _ := fingerprint.New(0, 16)
	// The recent table drops under a quarter of this fixture's rows in
	// some windows: with short windows the workers hand rows over.
	setForTest(t, &recentWindow, 500)
	setForTest(t, &recentBypass, 4000)
	setForTest(t, &testAggLimit, 0) // and per run below
	setForTest(t, &fewSwitch, true)
	for _, w := range []int{2, 3} {
		for _, full := range []bool{false, true} {
			testAggLimit = 0
			fewSwitch = true
			if full {
				// A table not on course to hold the run, which the
				// workers leave at the recent table's first verdict
				// unless told not to.
				testAggLimit = aggEmpty + int64(w)*aggPerWorker + 64<<10
				fewSwitch = false
			}
			testHanded.Store(0)
			rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: w})
			if testHanded.Load() == 0 {
				t.Fatalf("%d workers, table filling %v: no row handed over", w, full)
			}
			if full != (rep.SpilledRecords > 0) {
				t.Fatalf("%d workers, table filling %v: %d records spilled", w, full, rep.SpilledRecords)
			}
			checkBrute(t, rep, recs, h)
		}
	}
}
