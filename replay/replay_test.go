package replay

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/crawltrace/crawltrace/internal/arrowtest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay/policy"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// genTrace writes a small synthetic condensed trace and returns its path.
func genTrace(t testing.TB, dir, name string, cfg GenConfig) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := GenerateFile(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustKeys is GenerateKeys(cfg), failing t on an error.
// genTraceKeys writes cfg's trace to dir/name as genTrace does and returns
// its path and its keys, generated again in memory.
func genTraceKeys(t testing.TB, dir, name string, cfg GenConfig) (string, []uint64) {
	t.Helper()
	return genTrace(t, dir, name, cfg), mustKeys(t, cfg)
}

func mustKeys(t testing.TB, cfg GenConfig) []uint64 {
	t.Helper()
	keys, err := GenerateKeys(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func smallGen(seed uint64) GenConfig {
	return GenConfig{Requests: 20_000, Keys: 3_000, Alpha: 0.8, Locality: 0.3, Window: 32, Seed: seed}
}

func allPolicies() []string { return policy.Names() }

// stripSeconds zeroes the timing column so outputs compare exactly.
func stripSeconds(rows []Row) []Row {
	out := slices.Clone(rows)
	for i := range out {
		out[i].Seconds = 0
	}
	return out
}

func csvOf(t *testing.T, rows []Row) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCSV(&b, stripSeconds(rows)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGoldenCSV(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Traces = []string{"testdata/tiny.txt"}
	cfg.Format = FormatText
	cfg.Policies = allPolicies()
	cfg.Sizes = []int{1, 2, 4, 8}
	cfg.Seeds = 3
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := csvOf(t, res.Rows)
	golden := "testdata/tiny-results.csv"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("results differ from %s (run go test -update after checking):\n%s", golden, got)
	}
}

func TestSweepInvariants(t *testing.T) {
	dir := t.TempDir()
	path := genTrace(t, dir, "g.arrow", smallGen(1))
	keys, _ := ReadFile(path, FormatCondensed)
	_, distinct := NextUse(keys)
	cfg := DefaultConfig()
	cfg.Traces = []string{path}
	cfg.Policies = allPolicies()
	cfg.Sizes = []int{1, 3, 16, 100, 1000, 5000}
	cfg.Seeds = 2
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cfg.Policies) * len(cfg.Sizes); len(res.Rows) != want {
		t.Fatalf("%d rows, want %d", len(res.Rows), want)
	}
	minMiss := map[int]int64{}
	for _, r := range res.Rows {
		if r.Policy == "min" {
			minMiss[r.Size] = r.Misses
		}
	}
	for _, r := range res.Rows {
		if r.Requests != int64(len(keys)) {
			t.Errorf("%s size %d: %d requests, want %d", r.Policy, r.Size, r.Requests, len(keys))
		}
		// MIN is optimal among caches that admit every missed key: INFINITE
		// is unbounded and STATIC bypasses (and preloads for free), so both
		// may beat it; INFINITE bounds everything.
		if r.Policy != "infinite" && r.Policy != "static" && r.Misses < minMiss[r.Size] {
			t.Errorf("%s size %d: %v misses < MIN's %v", r.Policy, r.Size, r.Misses, minMiss[r.Size])
		}
		if r.Policy == "infinite" && r.Misses != int64(distinct) {
			t.Errorf("infinite: %v misses, want %d distinct keys", r.Misses, distinct)
		}
		if r.Misses < int64(distinct) && !(r.Policy == "static" && !cfg.ChargeStatic) {
			t.Errorf("%s size %d: %v misses < %d distinct keys", r.Policy, r.Size, r.Misses, distinct)
		}
		if r.Policy != "infinite" && r.Policy != "static" && r.RelativeToMin < 1 {
			t.Errorf("%s size %d: relative to MIN %v < 1", r.Policy, r.Size, r.RelativeToMin)
		}
		if r.Policy == "random" && r.Seeds != 2 {
			t.Errorf("random: %d seeds", r.Seeds)
		}
	}
}

// TestOnePassMatchesPolicyPackage checks the one-pass curves against the
// policy package's own per-size LRU and MIN on a generated trace.
func TestOnePassMatchesPolicyPackage(t *testing.T) {
	keys, _ := GenerateKeys(GenConfig{Requests: 5000, Keys: 300, Alpha: 0.9, Locality: 0.3, Window: 8, Seed: 9})
	sizes := sizes1to(64)
	lru, _ := LRUCurve(NewSliceSource(keys), sizes, 100)
	mn, _ := MINCurve(keys, nil, sizes, 100)
	for i, k := range sizes {
		for _, c := range []struct {
			name string
			got  int64
		}{{"lru", lru.Hits[i]}, {"min", mn.Hits[i]}} {
			p, err := policy.New(c.name, k, policy.Options{Trace: keys})
			if err != nil {
				t.Fatal(err)
			}
			var hits int64
			for j, key := range keys {
				if p.Access(key) && j >= 100 {
					hits++
				}
			}
			if hits != c.got {
				t.Fatalf("%s size %d: one-pass %d hits, policy package %d", c.name, k, c.got, hits)
			}
		}
	}
}

func TestRandomReproducible(t *testing.T) {
	path := genTrace(t, t.TempDir(), "g.arrow", smallGen(2))
	run := func(seeds int) []Row {
		cfg := DefaultConfig()
		cfg.Traces = []string{path}
		cfg.Policies = []string{"random"}
		cfg.Sizes = []int{10, 100}
		cfg.Seeds = seeds
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return stripSeconds(res.Rows)
	}
	a, b := run(3), run(3)
	if !slices.EqualFunc(a, b, func(x, y Row) bool { return fmt.Sprint(x) == fmt.Sprint(y) }) {
		t.Errorf("two runs differ:\n%v\n%v", a, b)
	}
	if a[0].MissRateStd == 0 {
		t.Errorf("3 seeds give no spread: %+v", a[0])
	}
	one := run(1)
	if one[0].Hits == a[0].Hits && one[1].Hits == a[1].Hits {
		t.Errorf("mean of 3 seeds equals seed 1 exactly: %+v", a)
	}
}

// TestWarmup checks warmup accounting against hand-computed counts.
// Trace 1 2 1 3 1 2, warmup 2, size 1:
//
//	LRU:      m m m m m m -> counted (last 4): 0 hits
//	size 2:   m m h m h m -> counted 1 3 1 2: h m h m = 2 hits
//	infinite: m m h m h h -> counted: 3 hits, misses 1 (key 3)
func TestWarmup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.txt")
	os.WriteFile(path, []byte("1\n2\n1\n3\n1\n2\n"), 0o644)
	cfg := DefaultConfig()
	cfg.Traces = []string{path}
	cfg.Format = FormatText
	cfg.Policies = []string{"lru", "clock", "infinite", "min"}
	cfg.Sizes = []int{1, 2}
	cfg.Warmup = 2
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"lru/1": 0, "lru/2": 2, "clock/2": 2, "infinite/1": 3, "infinite/2": 3,
		// MIN size 1 never hits here; size 2: 1 2 1(h) 3(evict 2? next 2 at 5, next 1 at 4 -> evict 2) 1(h) 2(m)
		"min/1": 0, "min/2": 2}
	for _, r := range res.Rows {
		if r.Requests != 4 {
			t.Errorf("%s/%d: %d requests counted, want 4", r.Policy, r.Size, r.Requests)
		}
		if w, ok := want[fmt.Sprintf("%s/%d", r.Policy, r.Size)]; ok && r.Hits != w {
			t.Errorf("%s/%d: %v hits, want %v", r.Policy, r.Size, r.Hits, w)
		}
	}
}

func TestTaskSlicingMerge(t *testing.T) {
	dir := t.TempDir()
	traces := []string{genTrace(t, dir, "node-000.full.arrow", smallGen(3)), genTrace(t, dir, "node-000.cross.arrow", smallGen(4))}
	base := DefaultConfig()
	base.Traces = traces
	base.Policies = []string{"lru", "min", "clock", "random", "static", "infinite"}
	base.Sizes = []int{4, 64, 512}
	base.Seeds = 2
	base.Plots = false
	whole, err := Run(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tasks")
	const n = 4
	for i := range n {
		cfg := base
		cfg.Task, cfg.Tasks, cfg.OutDir = i, n, out
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results.csv")); err == nil {
		t.Error("a sliced run wrote results.csv")
	}
	merged, err := Merge([]string{out}, filepath.Join(dir, "merged"), true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := csvOf(t, merged.Rows), csvOf(t, whole.Rows); got != want {
		t.Errorf("merged slices differ from the unsliced run:\n%s\nwant\n%s", got, want)
	}
	// The crawl, the traces and the parameters survive the slicing.
	if merged.Meta.CrawlID == "" || merged.Meta.CrawlID != whole.Meta.CrawlID {
		t.Errorf("merged crawl id %q, want %q", merged.Meta.CrawlID, whole.Meta.CrawlID)
	}
	if !slices.Equal(merged.Meta.Inputs, whole.Meta.Inputs) {
		t.Errorf("merged inputs %q, want %q", merged.Meta.Inputs, whole.Meta.Inputs)
	}
	wantParams := maps.Clone(whole.Meta.Params)
	wantParams["merged_results"] = strconv.Itoa(n)
	if !maps.Equal(merged.Meta.Params, wantParams) {
		t.Errorf("merged params %v, want %v", merged.Meta.Params, wantParams)
	}
	if len(merged.Traces) != len(traces) || merged.Traces["node-000.cross.arrow"].CrawlID != whole.Traces["node-000.cross.arrow"].CrawlID {
		t.Errorf("merged trace metadata %v, want %v", merged.Traces, whole.Traces)
	}
	// A damaged metadata file is an error naming it.
	bad := filepath.Join(out, "results-task-1-of-4.json")
	good, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bad, good[:len(good)/2], 0o644)
	if _, err := Merge([]string{out}, "", false); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("merge with a damaged task metadata file: %v", err)
	}
	os.WriteFile(bad, good, 0o644)
	// MIN per size gives the same rows as the one-pass stack.
	perSize := base
	perSize.MINPerSize = true
	ps, err := Run(context.Background(), perSize)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := csvOf(t, ps.Rows), csvOf(t, whole.Rows); got != want {
		t.Errorf("MIN per size differs from one-pass:\n%s\nwant\n%s", got, want)
	}
	for _, f := range []string{"results.csv", "results.arrow", "memory.csv", "missrate-node-000.full.png", "relative-node-000.cross.svg", "full-vs-cross-node-000.png"} {
		if _, err := os.Stat(filepath.Join(dir, "merged", f)); err != nil {
			t.Error(err)
		}
	}
	// A missing task is an error.
	os.Remove(filepath.Join(out, TaskFileName(2, n)))
	if _, err := Merge([]string{out}, "", false); err == nil || !strings.Contains(err.Error(), "missing results of task(s) 2 of 4") {
		t.Errorf("merge with a missing task: %v", err)
	}
}

func TestOracleGeneralRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := genTrace(t, dir, "g.arrow", smallGen(5))
	og := filepath.Join(dir, "g.oracleGeneral")
	txt := filepath.Join(dir, "g.txt")
	if err := ExportFile(path, FormatCondensed, og, FormatOracleGeneral); err != nil {
		t.Fatal(err)
	}
	if err := ExportFile(path, FormatCondensed, txt, FormatText); err != nil {
		t.Fatal(err)
	}
	run := func(p, format string) []Row {
		cfg := DefaultConfig()
		cfg.Traces = []string{p}
		cfg.Format = format
		cfg.Policies = allPolicies()
		cfg.Sizes = []int{2, 50, 700}
		cfg.Seeds = 2
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := stripSeconds(res.Rows)
		for i := range rows {
			rows[i].Trace = ""
		}
		return rows
	}
	want := csvOf(t, run(path, FormatCondensed))
	if got := csvOf(t, run(og, FormatOracleGeneral)); got != want {
		t.Errorf("oracleGeneral replay differs:\n%s\nwant\n%s", got, want)
	}
	if got := csvOf(t, run(txt, FormatText)); got != want {
		t.Errorf("text replay differs:\n%s\nwant\n%s", got, want)
	}
}

func TestOracleGeneralBytes(t *testing.T) {
	var b bytes.Buffer
	WriteOracleGeneral(&b, []uint64{7, 9, 7})
	want := "" +
		"01000000" + "0700000000000000" + "01000000" + "0300000000000000" +
		"02000000" + "0900000000000000" + "01000000" + "ffffffffffffffff" +
		"03000000" + "0700000000000000" + "01000000" + "ffffffffffffffff"
	if got := fmt.Sprintf("%x", b.Bytes()); got != want {
		t.Errorf("oracleGeneral bytes\n%s\nwant\n%s", got, want)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	var og bytes.Buffer
	WriteOracleGeneral(&og, []uint64{1, 2, 3})
	negNext := og.Bytes()[:24:24]
	negNext = append(slices.Clone(negNext[:16]), 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	tests := []struct {
		path, format, want string
	}{
		{write("notarrow.arrow", "this is not an arrow file"), FormatCondensed, "not an Arrow file"},
		{write("trunc.og", og.String()[:50]), FormatOracleGeneral, "partial record at offset 48"},
		{write("neg.og", string(negNext)), FormatOracleGeneral, "offset 0"},
		{write("nul.txt", "1\n2\nab\x00c\n"), FormatText, "line 3: control byte 0x00"},
		{write("utf.txt", "1\n\xff\xfe\n"), FormatText, "line 2: invalid UTF-8"},
		{write("big.txt", "1\n99999999999999999999999\n"), FormatText, "line 2: decimal key overflows"},
		{write("long.txt", strings.Repeat("x", maxTextLine+10)), FormatText, "line 1: longer than"},
	}
	for _, tt := range tests {
		_, err := ReadFile(tt.path, tt.format)
		if !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v; want ErrCorrupt naming the file and %q", filepath.Base(tt.path), err, tt.want)
		}
		// Run reports it too.
		cfg := DefaultConfig()
		cfg.Traces, cfg.Format, cfg.Policies, cfg.Sizes = []string{tt.path}, tt.format, []string{"lru", "clock"}, []int{4}
		if _, err := Run(context.Background(), cfg); !errors.Is(err, tracefile.ErrCorrupt) {
			t.Errorf("%s: Run err %v, want ErrCorrupt", filepath.Base(tt.path), err)
		}
	}
	cfg := DefaultConfig()
	cfg.Traces = []string{filepath.Join(dir, "nul.txt")}
	cfg.Policies = []string{"nosuch"}
	if _, err := Run(context.Background(), cfg); !errors.Is(err, tracefile.ErrBadInput) {
		t.Errorf("unknown policy: %v", err)
	}
}

func TestParseTextKey(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"42", 42, true},
		{"  42\r", 42, true},
		{"0x10", 16, true},
		{"0XfF", 255, true},
		{"18446744073709551615", math.MaxUint64, true},
		{"", 0, false},
		{"   ", 0, false},
		{"http://example.com/", 0xfe, true}, // hashed; checked below
	}
	for _, tt := range tests {
		k, ok, err := ParseTextKey([]byte(tt.in))
		if err != nil || ok != tt.ok {
			t.Errorf("ParseTextKey(%q) = %v, %v, %v", tt.in, k, ok, err)
			continue
		}
		if tt.in == "http://example.com/" {
			// xxHash64 of the string, pinned.
			if k != 0xfdb57b2d0813b5b1 {
				t.Errorf("hash of %q = %#x", tt.in, k)
			}
			continue
		}
		if k != tt.want {
			t.Errorf("ParseTextKey(%q) = %d, want %d", tt.in, k, tt.want)
		}
	}
}

func TestArrowNoLeak(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := []Row{{Trace: "t", Policy: "lru", Size: 1, Requests: 3, Hits: 1, Misses: 2, MissRate: 2. / 3, RelativeToMin: math.NaN(), Seeds: 1}}
	var b bytes.Buffer
	meta := tracefile.TableMeta{CrawlID: "c1", Inputs: []string{"t"}, Params: map[string]string{"seeds": "1"}}
	if err := WriteArrow(&b, rows, meta, mem); err != nil {
		t.Fatal(err)
	}
	r, rec := arrowtest.FirstBatch(t, b.Bytes(), nil)
	defer r.Close()
	if rec.NumRows() != 1 || rec.Column(7).NullN() != 1 || rec.Schema().Field(6).Name != "miss_rate" {
		t.Errorf("arrow results: %v", rec)
	}
	// Counts are integers; the metadata round-trips.
	for _, i := range []int{2, 3, 4, 5, 9} {
		if f := rec.Schema().Field(i); f.Type.ID() != arrow.INT64 {
			t.Errorf("column %s is %s, want int64", f.Name, f.Type)
		}
	}
	got, err := tracefile.ParseTableMeta(r.Schema().Metadata())
	if err != nil || got.Kind != tracefile.KindReplayResults || got.Table != "results" || got.CrawlID != "c1" ||
		!slices.Equal(got.Inputs, meta.Inputs) || got.Params["seeds"] != "1" || got.ToolVersion != tracefile.ToolVersion || got.Created.IsZero() {
		t.Errorf("metadata %+v, %v", got, err)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	rows := []Row{{Trace: "a,b", Policy: "random", Size: 8, Requests: 10, Hits: 2, Misses: 8, MissRate: 0.75, RelativeToMin: math.NaN(), Seconds: 1.5, Seeds: 2, MissRateStd: 0.01}}
	var b bytes.Buffer
	WriteCSV(&b, rows)
	got, err := ReadCSV(&b, "x.csv")
	if err != nil || len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(rows[0]) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	if _, err := ReadCSV(strings.NewReader("nope\n"), "bad.csv"); !errors.Is(err, tracefile.ErrCorrupt) {
		t.Errorf("bad CSV: %v", err)
	}
}

// The oracleGeneral reader over several batches (the last one partial)
// gives every key in order, and a bad record in a later batch is reported
// at its own offset.
func TestOracleGeneralBatches(t *testing.T) {
	dir := t.TempDir()
	keys := make([]uint64, 2*batchSize+1234)
	for i := range keys {
		keys[i] = uint64(i*7919) % 50000
	}
	var b bytes.Buffer
	if err := WriteOracleGeneral(&b, keys); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "t.og")
	os.WriteFile(p, b.Bytes(), 0o644)
	got, err := readFileCtx(context.Background(), p, FormatOracleGeneral)
	if err != nil || !slices.Equal(got, keys) {
		t.Fatalf("read %d keys (err %v), want the %d written", len(got), err, len(keys))
	}
	bad := batchSize + 17
	data := slices.Clone(b.Bytes())
	copy(data[bad*OracleRecordSize+16:], []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	os.WriteFile(p, data, 0o644)
	_, err = readFileCtx(context.Background(), p, FormatOracleGeneral)
	if want := fmt.Sprintf("in record at offset %d", bad*OracleRecordSize); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad record %d: error %v, want one naming %q", bad, err, want)
	}
}
