package condense

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// makeCrawl writes a crawl directory with nodes nodes of rows rows each
// (URLs drawn from a pool of distinct ones, with repeats) and returns the
// records per node.
func makeCrawl(t testing.TB, dir string, nodes, rows, distinct int, seed uint64) [][]tracefile.URLRecord {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]tracefile.URLRecord, nodes)
	for n := 0; n < nodes; n++ {
		m := tracefile.Meta{CrawlID: "fixture", Node: n, Nodes: nodes, Partitioner: "host", Created: time.Unix(1, 0)}
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(dir, n), m, tracefile.WriterConfig{FlushRows: 500, SegmentBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rows; i++ {
			k := rng.IntN(distinct)
			if rng.IntN(3) == 0 { // locality: repeat a small hot set
				k = rng.IntN(1 + distinct/50)
			}
			r := tracefile.URLRecord{URL: fmt.Sprintf("http://h%d.test/page/%d?q=%d", k%97, k, k*31), Kind: tracefile.URLLink,
				Tag: "a", Dest: uint16((k % 97) % nodes), Source: uint64(i)}
			if _, err := w.Append(r); err != nil {
				t.Fatal(err)
			}
			out[n] = append(out[n], r)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// bruteForce computes the expected counts and colliding pairs with maps.
func bruteForce(recs []tracefile.URLRecord, h fingerprint.Hasher) (urls, fps int64, pairs map[string]bool) {
	byFP := map[uint64]map[string]bool{}
	for _, r := range recs {
		fp := h.String(r.URL)
		if byFP[fp] == nil {
			byFP[fp] = map[string]bool{}
		}
		byFP[fp][r.URL] = true
	}
	pairs = map[string]bool{}
	for fp, set := range byFP {
		fps++
		urls += int64(len(set))
		var us []string
		for u := range set {
			us = append(us, u)
		}
		sort.Strings(us)
		for a := 0; a < len(us); a++ {
			for b := a + 1; b < len(us); b++ {
				pairs[fmt.Sprintf("%x %s %s", fp, us[a], us[b])] = true
			}
		}
	}
	return
}

func pairSet(cs []Collision) map[string]bool {
	m := map[string]bool{}
	for _, c := range cs {
		m[fmt.Sprintf("%x %s %s", c.FP, c.A, c.B)] = true
	}
	return m
}

func mustRun(t *testing.T, cfg Config) *Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestTracesFullAndCross(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	recs := makeCrawl(t, in, 3, 3000, 800, 1)
	rep := mustRun(t, Config{Input: in, Output: out})
	for n := 0; n < 3; n++ {
		full, meta, err := tracefile.ReadCondensedAll(filepath.Join(out, tracefile.CondensedName(n, tracefile.SubtraceFull)))
		if err != nil {
			t.Fatal(err)
		}
		cross, _, err := tracefile.ReadCondensedAll(filepath.Join(out, tracefile.CondensedName(n, tracefile.SubtraceCross)))
		if err != nil {
			t.Fatal(err)
		}
		var wantFull, wantCross []uint64
		for _, r := range recs[n] {
			fp := fingerprint.URL(r.URL)
			wantFull = append(wantFull, fp)
			if int(r.Dest) != n {
				wantCross = append(wantCross, fp)
			}
		}
		if !reflect.DeepEqual(full, wantFull) {
			t.Errorf("node %d: full trace differs", n)
		}
		if !reflect.DeepEqual(cross, wantCross) {
			t.Errorf("node %d: cross trace differs (%d vs %d)", n, len(cross), len(wantCross))
		}
		if meta.Node != n || meta.Subtrace != tracefile.SubtraceFull || meta.CrawlID != "fixture" {
			t.Errorf("node %d meta %+v", n, meta)
		}
		nr := rep.PerNode[n]
		if nr.Rows != int64(len(wantFull)) || nr.CrossRows != int64(len(wantCross)) {
			t.Errorf("node %d report rows %d/%d", n, nr.Rows, nr.CrossRows)
		}
		urls, fps, _ := bruteForce(recs[n], fingerprint.Default)
		if nr.DistinctURLs != urls || nr.DistinctFPs != fps {
			t.Errorf("node %d: distinct %d/%d, want %d/%d", n, nr.DistinctURLs, nr.DistinctFPs, urls, fps)
		}
	}
	var all []tracefile.URLRecord
	for _, r := range recs {
		all = append(all, r...)
	}
	urls, fps, _ := bruteForce(all, fingerprint.Default)
	if rep.Total.DistinctURLs != urls || rep.Total.DistinctFPs != fps || rep.Total.CollisionPairs != 0 || rep.Total.Rows != 9000 {
		t.Errorf("total %+v, want %d urls %d fps", rep.Total, urls, fps)
	}
	if _, err := os.Stat(filepath.Join(out, "report.json")); err != nil {
		t.Error(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(out, ".spill*")); len(ents) != 0 {
		t.Errorf("spill left behind: %v", ents)
	}
}

// With fingerprints truncated to 16 bits, the report lists exactly the
// colliding pairs a brute-force map finds, per node and in total.
func TestCollisionsAt16Bits(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	recs := makeCrawl(t, in, 2, 4000, 3000, 2)
	rep := mustRun(t, Config{Input: in, Output: out, Bits: 16})
	if pairs := checkBruteAt16(t, rep, recs); rep.Total.CollisionPairs != int64(pairs) {
		t.Errorf("%d collision pairs counted, %d listed by brute force", rep.Total.CollisionPairs, pairs)
	}
	if rep.Total.ExpectedCollisions < 1 {
		t.Errorf("expected collisions at 16 bits: %v", rep.Total.ExpectedCollisions)
	}
	// --fail-on-collision turns the finding into an error, report still written.
	out2 := t.TempDir()
	if _, err := Run(context.Background(), Config{Input: in, Output: out2, Bits: 16, FailOnCollision: true}); !errors.Is(err, ErrCollision) {
		t.Errorf("FailOnCollision: %v", err)
	}
}

// comparable strips the fields that legitimately differ between runs.
func comparable(r *Report) *Report {
	c := *r
	c.ElapsedSec, c.Partitions, c.MemoryBudget, c.Shard, c.Shards, c.ShardsMerged = 0, 0, 0, 0, 0, nil
	c.InputBytes, c.InputBytesRead = 0, 0
	c.MapSec, c.VerifySec, c.SpilledRecords, c.UnfilteredRows, c.InMemory = 0, 0, 0, 0, false
	c.dropped = nil // the merge's note for MergeTraces, not in report.json
	c.PerNode = append([]NodeReport(nil), r.PerNode...)
	for i := range c.PerNode {
		c.PerNode[i].Full = filepath.Base(c.PerNode[i].Full)
		c.PerNode[i].Cross = filepath.Base(c.PerNode[i].Cross)
		c.PerNode[i].BytesOut = 0
	}
	c.BytesOut = 0
	return &c
}

func TestMemoryBudgetGivesSameReport(t *testing.T) {
	in := t.TempDir()
	makeCrawl(t, in, 2, 20000, 15000, 3)
	base := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 20})
	// A budget far below the input: many partitions, each split again.
	setForTest(t, &minPartitionBytes, 2<<10)
	small := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 20, MemoryBytes: 1, Workers: 2})
	if small.Partitions < 64 {
		t.Errorf("only %d partitions under a tiny budget", small.Partitions)
	}
	if base.Total.CollisionPairs == 0 {
		t.Fatal("fixture should collide at 20 bits")
	}
	if !reflect.DeepEqual(comparable(base), comparable(small)) {
		t.Errorf("budgeted report differs:\n%+v\n%+v", base.Total, small.Total)
	}
}

// runSharded runs the map tasks of a sharded run of in one at a time, the
// reduce tasks two at a time, each in its own call, then merges the
// reports (read back from disk, as `condense merge` does) and the traces.
// It returns the merged report, the output directory and what each map
// task read of the input.
func runSharded(t *testing.T, in string, shards, workers int) (*Report, string, []int64) {
	t.Helper()
	out := t.TempDir()
	runAll := func(at int, f func(i int) error) {
		t.Helper()
		sem := make(chan struct{}, at)
		var wg sync.WaitGroup
		errs := make(chan error, shards)
		for i := 0; i < shards; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := f(i); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	// Reduce before every map has finished is refused.
	if _, err := Reduce(context.Background(), ReduceConfig{Dir: out, Shard: 0, Shards: shards}); !errors.Is(err, tracefile.ErrBadInput) {
		t.Errorf("reduce before the maps: %v", err)
	}
	read := make([]int64, shards)
	runAll(1, func(i int) error {
		rep, err := Run(context.Background(), Config{Input: in, Output: out, Bits: 17, Shard: i, Shards: shards, Workers: workers, MemoryBytes: 64 << 10})
		if err == nil {
			read[i] = rep.InputBytesRead
		}
		return err
	})
	runAll(2, func(i int) error {
		_, err := Reduce(context.Background(), ReduceConfig{Dir: out, Shard: i, Shards: shards, Workers: 2, MemoryBytes: 64 << 10})
		return err
	})
	var disk []*Report
	for i := 0; i < shards; i++ {
		for _, name := range []string{MapReportName(i, shards), ReportName(i, shards)} {
			r, err := ReadReport(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			disk = append(disk, r)
		}
	}
	merged, err := Merge(disk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(disk[:len(disk)-1]); err == nil {
		t.Error("merge with a missing shard succeeded")
	}
	if _, err := Merge(append(disk, disk[0])); err == nil {
		t.Error("merge with a duplicate shard succeeded")
	}
	if err := MergeTraces(out, out, merged); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, PartsDir)); !os.IsNotExist(err) {
		t.Errorf("parts left after the merge: %v", err)
	}
	return merged, out, read
}

// sameTraces fails the test unless every node's full and cross traces in
// the two reports are equal, fingerprint for fingerprint.
func sameTraces(t *testing.T, a, b *Report) {
	t.Helper()
	if len(a.PerNode) != len(b.PerNode) {
		t.Fatalf("%d nodes and %d", len(a.PerNode), len(b.PerNode))
	}
	for i := range a.PerNode {
		for _, p := range [][2]string{{a.PerNode[i].Full, b.PerNode[i].Full}, {a.PerNode[i].Cross, b.PerNode[i].Cross}} {
			fa, _, err := tracefile.ReadCondensedAll(p[0])
			if err != nil {
				t.Fatal(err)
			}
			fb, _, err := tracefile.ReadCondensedAll(p[1])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fa, fb) {
				t.Errorf("%s (%d fingerprints) differs from %s (%d)", p[1], len(fb), p[0], len(fa))
			}
		}
	}
}

// The map, reduce and merge of a sharded run, each task in its own call:
// the merged report equals an unsharded run's, every node's traces are
// the same, and the map tasks together read the input once.
func TestShardedEqualsUnsharded(t *testing.T) {
	in := t.TempDir()
	makeCrawl(t, in, 5, 5000, 3000, 5)
	whole := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 17})
	// A small budget: several ranges per shard, and oversized ones split.
	setForTest(t, &minPartitionBytes, 4<<10)
	// Workers 1: segments read in order.
	merged, _, reads := runSharded(t, in, 4, 1)
	if !reflect.DeepEqual(comparable(whole), comparable(merged)) {
		t.Errorf("merged report differs:\nwhole  %+v\nmerged %+v", whole.Total, merged.Total)
	}
	if merged.Total.DistinctURLs == 0 || merged.Total.CollisionPairs == 0 {
		t.Errorf("fixture should have distinct URLs and collisions at 17 bits: %+v", merged.Total)
	}
	sameTraces(t, whole, merged)
	// Read volume: the map tasks together read each byte the unsharded run
	// reads once (and the framing twice: checked, then read with its
	// batch), which is at most the input (the batches' columns a condense
	// does not decode are skipped).
	var read int64
	for _, r := range reads {
		read += r
	}
	if whole.InputBytesRead > merged.BytesIn || float64(read) < float64(whole.InputBytesRead) || float64(read) > 1.3*float64(whole.InputBytesRead) {
		t.Errorf("map tasks read %d bytes where an unsharded run reads %d of a %d-byte input", read, whole.InputBytesRead, merged.BytesIn)
	}
}

// Map tasks split the input, not the nodes: over a one-node crawl (several
// segments, or one segment of many batches, as an import writes), each of
// N map tasks reads about 1/N of it, and the merged report and traces
// equal an unsharded run's.
func TestShardingSplitsOneNode(t *testing.T) {
	setForTest(t, &minPartitionBytes, 4<<10)
	for _, tc := range []struct {
		name    string
		segment int64
		shards  int
		workers int
	}{{"segments", 64 << 10, 2, 1}, {"one segment", 1 << 30, 2, 1}, {"one segment 3 tasks", 1 << 30, 3, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			in := t.TempDir()
			w, err := tracefile.CreateURLWriter(tracefile.NodeDir(in, 0), tracefile.Meta{CrawlID: "one", Nodes: 1, Partitioner: "host", Created: time.Unix(1, 0)},
				tracefile.WriterConfig{FlushRows: 500, SegmentBytes: tc.segment})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, 7))
			for i := range 20000 {
				k := rng.IntN(4000)
				if _, err := w.Append(tracefile.URLRecord{URL: fmt.Sprintf("http://h%d.test/p/%d", k%61, k), Kind: tracefile.URLLink, Dest: uint16(k % 3), Source: uint64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			segs, _ := tracefile.ListSegments(tracefile.NodeDir(in, 0), tracefile.PrefixURLs)
			if (tc.segment > 1<<20) != (len(segs) == 1) {
				t.Fatalf("%d segments", len(segs))
			}
			whole := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 17})
			merged, _, reads := runSharded(t, in, tc.shards, tc.workers)
			if !reflect.DeepEqual(comparable(whole), comparable(merged)) {
				t.Errorf("merged report differs:\nwhole  %+v\nmerged %+v", whole, merged)
			}
			sameTraces(t, whole, merged)
			// Shares of what the unsharded run reads (a condense skips the
			// columns it does not decode: less than the input).
			t.Logf("map tasks read %v of the %d bytes an unsharded run reads (input %d)", reads, whole.InputBytesRead, whole.BytesIn)
			limit := 1.2 / float64(tc.shards) // 60% for two tasks
			for i, r := range reads {
				if f := float64(r) / float64(whole.InputBytesRead); f > limit || f < 0.8/float64(tc.shards) {
					t.Errorf("map task %d of %d read %d bytes, %.0f%% of the %d bytes an unsharded run reads (want about %.0f%%)", i, tc.shards, r, 100*f, whole.InputBytesRead, 100/float64(tc.shards))
				}
			}
		})
	}
}

func TestCutSegmentReported(t *testing.T) {
	in := t.TempDir()
	makeCrawl(t, in, 1, 3000, 500, 6)
	segs, _ := tracefile.ListSegments(tracefile.NodeDir(in, 0), tracefile.PrefixURLs)
	if len(segs) < 3 {
		t.Fatalf("want several segments, got %d", len(segs))
	}
	last := segs[0] // a crash cannot cut a middle segment, but a disk can
	b, _ := os.ReadFile(last)
	os.WriteFile(last, b[:len(b)-100], 0o644)
	// And the last segment cut inside its schema (killed right after rotation).
	lastSeg := segs[len(segs)-1]
	os.WriteFile(lastSeg, []byte{0xff, 0xff, 0xff, 0xff, 0x10}, 0o644)
	rep := mustRun(t, Config{Input: in, Output: t.TempDir()})
	if len(rep.CutSegments) != 2 || rep.CutSegments[1].RowsRecovered != 0 {
		t.Errorf("cut schema segment not reported: %+v", rep.CutSegments)
	}
	if len(rep.CutSegments) < 1 || filepath.Base(rep.CutSegments[0].File) != filepath.Base(last) {
		t.Fatalf("cut segments %+v", rep.CutSegments)
	}
	if rep.Total.Rows >= 3000 || rep.Total.Rows < 1000 || rep.CutSegments[0].RowsRecovered == 0 {
		t.Errorf("rows recovered %d", rep.Total.Rows)
	}
}

func TestBadInput(t *testing.T) {
	empty := t.TempDir()
	if _, err := Run(context.Background(), Config{Input: empty, Output: t.TempDir()}); !errors.Is(err, tracefile.ErrBadInput) {
		t.Errorf("empty dir: %v", err)
	}
	junk := t.TempDir()
	os.MkdirAll(tracefile.NodeDir(junk, 0), 0o755)
	os.WriteFile(filepath.Join(tracefile.NodeDir(junk, 0), "urls-000001.arrows"), []byte("not arrow"), 0o644)
	out := t.TempDir()
	_, err := Run(context.Background(), Config{Input: junk, Output: out})
	if !errors.Is(err, tracefile.ErrCorrupt) {
		t.Errorf("junk segment: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("failed run left output: %v", ents)
	}
	// An empty crawl: valid segments with no rows.
	ec := t.TempDir()
	w, _ := tracefile.CreateURLWriter(tracefile.NodeDir(ec, 0), tracefile.Meta{Nodes: 1}, tracefile.WriterConfig{})
	w.Close()
	if _, err := Run(context.Background(), Config{Input: ec, Output: t.TempDir()}); !errors.Is(err, tracefile.ErrBadInput) {
		t.Errorf("empty crawl: %v", err)
	}
}

// One node of many segments read by more workers than nodes: segments read
// ahead of their turn are appended in log order.
func TestSegmentsReadInParallelKeepLogOrder(t *testing.T) {
	spillOnly(t) // the test is of the spill
	in, out := t.TempDir(), t.TempDir()
	recs := makeCrawl(t, in, 1, 20000, 5000, 9)
	segs, _ := tracefile.ListSegments(tracefile.NodeDir(in, 0), tracefile.PrefixURLs)
	if len(segs) < 8 {
		t.Fatalf("want many segments, got %d", len(segs))
	}
	rep := mustRun(t, Config{Input: in, Output: out, Workers: 4})
	full, _, err := tracefile.ReadCondensedAll(filepath.Join(out, tracefile.CondensedName(0, tracefile.SubtraceFull)))
	if err != nil {
		t.Fatal(err)
	}
	cross, _, err := tracefile.ReadCondensedAll(filepath.Join(out, tracefile.CondensedName(0, tracefile.SubtraceCross)))
	if err != nil {
		t.Fatal(err)
	}
	var wantFull, wantCross []uint64
	for _, r := range recs[0] {
		fp := fingerprint.URL(r.URL)
		wantFull = append(wantFull, fp)
		if r.Dest != 0 {
			wantCross = append(wantCross, fp)
		}
	}
	if !slices.Equal(full, wantFull) || !slices.Equal(cross, wantCross) {
		t.Errorf("traces out of log order: %d/%d full, %d/%d cross", len(full), len(wantFull), len(cross), len(wantCross))
	}
	urls, fps, _ := bruteForce(recs[0], fingerprint.Default)
	if rep.Total.DistinctURLs != urls || rep.Total.DistinctFPs != fps || rep.InputBytesRead == 0 {
		t.Errorf("total %+v, want %d URLs, %d fingerprints", rep.Total, urls, fps)
	}
	// Every distinct URL is spilled at least once, no row more than once.
	if rep.SpilledRecords < urls || rep.SpilledRecords > rep.Total.Rows || rep.MapSec <= 0 || rep.VerifySec <= 0 {
		t.Errorf("spilled %d records of %d rows (%d distinct), map %gs, verify %gs", rep.SpilledRecords, rep.Total.Rows, urls, rep.MapSec, rep.VerifySec)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 3 {
		t.Errorf("output holds %d entries, want two traces and report.json (chunk files left?)", len(ents))
	}
}

// A segment truncated by another process while condense reads it is
// reported cut where it was cut, naming it, the rows read before counted
// (batch bodies are read, not mapped: a mapped batch faults instead, which
// tracefile's TestNextURLsMappedTruncated covers); --strict makes it an
// error.
func TestSegmentTruncatedWhileRead(t *testing.T) {
	in := t.TempDir()
	writeNode := func(n int) {
		os.RemoveAll(tracefile.NodeDir(in, n))
		m := tracefile.Meta{CrawlID: "fixture", Node: n, Nodes: 2, Partitioner: "host", Created: time.Unix(1, 0)}
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(in, n), m, tracefile.WriterConfig{FlushRows: 20000})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 40000; i++ { // two batches of about 1.5 MB
			if _, err := w.Append(tracefile.URLRecord{URL: fmt.Sprintf("http://h%d.test/a/long/enough/path/%d", i%50, i), Kind: tracefile.URLLink}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { testAfterOpen = nil }()
	for _, strict := range []bool{false, true} {
		writeNode(0)
		writeNode(1)
		var victim string
		testAfterOpen = func(path string) {
			if victim != "" || !strings.Contains(path, "node-000") {
				return
			}
			// Keep the framing the reader checked; cut the bodies.
			victim = path
			if err := os.Truncate(path, 4096); err != nil {
				t.Error(err)
			}
		}
		rep, err := Run(context.Background(), Config{Input: in, Output: t.TempDir(), Workers: 1, Strict: strict})
		if strict {
			if !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(victim)) {
				t.Errorf("strict, segment truncated while read: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("segment truncated while read: %v", err)
		}
		if len(rep.CutSegments) != 1 || rep.CutSegments[0].File != victim || rep.PerNode[0].Rows != rep.CutSegments[0].RowsRecovered || rep.PerNode[1].Rows != 40000 {
			t.Errorf("cut segments %+v, rows %d and %d", rep.CutSegments, rep.PerNode[0].Rows, rep.PerNode[1].Rows)
		}
	}
}

// TestShardedNodeAllCut: a node whose every segment was cut before its
// schema is an error in the map tasks that read it, as it is unsharded,
// not a node missing silently from the merged report.
func TestShardedNodeAllCut(t *testing.T) {
	in := t.TempDir()
	makeCrawl(t, in, 2, 3000, 500, 6)
	segs, _ := tracefile.ListSegments(tracefile.NodeDir(in, 1), tracefile.PrefixURLs)
	for _, p := range segs {
		if err := os.Truncate(p, 10); err != nil { // inside the schema
			t.Fatal(err)
		}
	}
	if _, err := Run(context.Background(), Config{Input: in, Output: t.TempDir(), Bits: 17}); !errors.Is(err, tracefile.ErrBadInput) {
		t.Fatalf("unsharded: %v", err)
	}
	out := t.TempDir()
	failed := 0
	for i := range 2 {
		_, err := Run(context.Background(), Config{Input: in, Output: out, Bits: 17, Shard: i, Shards: 2})
		if err == nil {
			continue // node 1's segments lie in the other task's range
		}
		failed++
		if !errors.Is(err, tracefile.ErrBadInput) || !strings.Contains(err.Error(), "node-001") || !strings.Contains(err.Error(), "cut") {
			t.Errorf("map task %d of 2: %v, want node-001's segments named as cut", i, err)
		}
	}
	if failed == 0 {
		t.Error("both map tasks succeeded: node 1 would be missing from the merged report")
	}
}

// Spill blocks kept in memory and blocks written to the bucket files are
// verified together: with an allowance that holds only some of the blocks
// (a range may hold both kinds), the counts and colliding pairs, in total
// and per node, are a brute-force map's.
func TestKeptAndWrittenBlocks(t *testing.T) {
	in := t.TempDir()
	recs := makeCrawl(t, in, 3, 4000, 3000, 5)
	setForTest(t, &minPartitionBytes, 4<<10)
	setForTest(t, &keepFloor, 0)
	var kept, written int
	testAfterMap = func(k, w rangeChunks) {
		for _, cs := range k {
			kept += len(cs)
		}
		for _, cs := range w {
			written += len(cs)
		}
	}
	defer func() { testAfterMap = nil }()
	rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, MemoryBytes: 256 << 10, Workers: 2})
	if kept == 0 || written == 0 {
		t.Fatalf("%d blocks kept in memory and %d written: want some of each", kept, written)
	}
	t.Logf("%d ranges, %d blocks kept, %d written", rep.Partitions, kept, written)
	checkBruteAt16(t, rep, recs)
}

// Rows the gate spills without the filter (it drops too few of them) are
// counted exactly all the same: the report equals the brute force's at 16
// bits (collisions) and a run's whose filter sees every row.
func TestGateBypassesFilterExactly(t *testing.T) {
	spillOnly(t) // the test is of the spill
	in := t.TempDir()
	recs := makeCrawl(t, in, 3, 6000, 40000, 8) // few repeats
	whole := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: 2})
	if whole.UnfilteredRows != 0 {
		t.Fatalf("%d rows unfiltered with windows of %d rows", whole.UnfilteredRows, gateWindow)
	}
	setForTest(t, &gateWindow, 700)
	setForTest(t, &gateBypass, 2000)
	rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 16, Workers: 2})
	if rep.UnfilteredRows == 0 || rep.UnfilteredRows >= rep.Total.Rows {
		t.Fatalf("%d of %d rows unfiltered: want some", rep.UnfilteredRows, rep.Total.Rows)
	}
	if rep.SpilledRecords <= whole.SpilledRecords {
		t.Errorf("bypassing the filter spilled %d records, filtering %d", rep.SpilledRecords, whole.SpilledRecords)
	}
	if !reflect.DeepEqual(comparable(rep), comparable(whole)) {
		t.Errorf("report differs with the filter bypassed:\n%+v\n%+v", rep.Total, whole.Total)
	}
	checkBruteAt16(t, rep, recs)
}

// A large budget still cuts the buckets into ranges of a few MiB (the
// reduce sorts each in cache), and a small one into ranges that fit its
// share; a sharded run's tasks split the same count of ranges between them.
func TestRangesFor(t *testing.T) {
	for _, c := range []struct {
		in, budget int64
		shards     int
		min, max   int
	}{
		{1 << 30, 1 << 30, 1, 128, 512},   // 0.7 GiB of spill in 4 MiB ranges
		{256 << 20, 6 << 20, 1, 128, 256}, // in ranges of a sixth of 6 MiB
		{1 << 30, 1 << 30, 4, 32, 128},
		{1 << 20, 1 << 30, 1, 1, 1},
	} {
		if got := rangesFor(c.in, c.budget, c.shards); got < c.min || got > c.max {
			t.Errorf("rangesFor(%d, %d, %d) = %d, want %d..%d", c.in, c.budget, c.shards, got, c.min, c.max)
		}
	}
}

// An unsharded run keeps no spill blocks in memory within the first 64 MiB
// of its budget, and three eighths of the rest.
func TestKeepFor(t *testing.T) {
	for _, c := range []struct{ budget, want int64 }{{1, 0}, {64 << 20, 0}, {1 << 30, 360 << 20}} {
		if got := keepFor(c.budget); got != c.want {
			t.Errorf("keepFor(%d) = %d, want %d", c.budget, got, c.want)
		}
	}
}

// Issue 32, case 1 from the reader's side: a directory whose nodes are of
// two crawls (written before the recorder refused the second) is not
// condensed as one crawl: an error naming both crawl ids. Before, it was
// counted as one crawl of 2 nodes.
func TestCondenseRefusesTwoCrawls(t *testing.T) {
	in := t.TempDir()
	for node, id := range []string{"crawl-A", "crawl-B"} {
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(in, node), tracefile.Meta{CrawlID: id, Node: node, Nodes: 2, Partitioner: "host"}, tracefile.WriterConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(tracefile.URLRecord{URL: "http://a.test/", Kind: "seed"}); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	_, err := Run(context.Background(), Config{Input: in, Output: t.TempDir()})
	if !errors.Is(err, tracefile.ErrBadInput) || !strings.Contains(err.Error(), `"crawl-A"`) || !strings.Contains(err.Error(), `"crawl-B"`) {
		t.Fatalf("condense of two crawls: %v; want an error naming both", err)
	}
}
