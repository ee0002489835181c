package replay

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// lowestHashes keeps the n keys of lowest hash, whatever the order and
// repetition of the offers, as sorting all of them does.
func TestLowestHashes(t *testing.T) {
	keys := mustKeys(t, GenConfig{Requests: 20_000, Keys: 3_000, Alpha: 0.7, Locality: 0.2, Window: 16, Seed: 4})
	const n = 100
	l := newLowestHashes(n)
	distinct := map[uint64]bool{}
	for _, k := range keys {
		l.keepLowest(n, k, sampleHash(k))
		distinct[k] = true
	}
	var hs []uint64
	for k := range distinct {
		hs = append(hs, sampleHash(k))
	}
	slices.Sort(hs)
	var got []uint64
	for l.len() > 0 {
		got = append(got, l.pop().h)
	}
	slices.Reverse(got)
	if !slices.Equal(got, hs[:n]) {
		t.Errorf("kept hashes differ from the %d lowest", n)
	}
}

// A sample that holds every key is the whole trace: rows equal the exact
// ones, SHARDS' LRU included (its stack distances are then exact and its
// correction is zero).
func TestSampleOfEveryKeyIsExact(t *testing.T) {
	trace := genTrace(t, t.TempDir(), "t.arrow", smallGen(21))
	run := func(maxKeys int) []Row {
		cfg := DefaultConfig()
		cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots = []string{trace}, []string{"lru", "clock", "min"}, []int{1, 10, 100, 1000, 10_000}, false
		cfg.SampleMaxKeys = maxKeys
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Rows {
			res.Rows[i].SampleRate = 0
		}
		return res.Rows
	}
	if got, want := csvOf(t, run(1<<20)), csvOf(t, run(0)); got != want {
		t.Errorf("a sample of every key:\n%s\nexact:\n%s", got, want)
	}
}

// meanAbsErr is the mean absolute difference of two runs' miss rates over
// the rows of policy p at sizes of at least minSize.
func meanAbsErr(t *testing.T, exact, sampled []Row, p string, minSize int) float64 {
	t.Helper()
	want := map[int]float64{}
	for _, r := range exact {
		if r.Policy == p {
			want[r.Size] = r.MissRate
		}
	}
	var sum float64
	n := 0
	for _, r := range sampled {
		if r.Policy == p && r.Size >= minSize {
			sum += math.Abs(r.MissRate - want[r.Size])
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no %s rows at sizes >= %d", p, minSize)
	}
	return sum / float64(n)
}

// Sampled curves of LRU and CLOCK are within 0.01 mean absolute error of
// the exact ones at the sizes the sample resolves (at least 1/R), for a
// fixed rate (miniature simulations) and a fixed number of keys (SHARDS'
// LRU; CLOCK at the rate that keeps that many keys). The exact curves come
// from the exact code paths (the one-pass LRU stack and per-size CLOCK).
func TestSampledCurveError(t *testing.T) {
	t.Parallel() // CPU only, no package state
	if testing.Short() {
		t.Skip("replays a 2M-request trace exactly and sampled")
	}
	trace := genTrace(t, t.TempDir(), "t.arrow", GenConfig{Requests: 2_000_000, Keys: 200_000, Alpha: 0.9, Locality: 0.3, Window: 64, Seed: 1})
	sizes := PaperSizes()[6:19] // 2^6 .. 2^18
	run := func(rate float64, maxKeys int) []Row {
		cfg := DefaultConfig()
		cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots = []string{trace}, []string{"lru", "clock"}, sizes, false
		cfg.Sample, cfg.SampleMaxKeys = rate, maxKeys
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res.Rows
	}
	exact := run(0, 0)
	for _, c := range []struct {
		rate    float64
		maxKeys int
	}{{0.05, 0}, {0, 8000}} {
		rows := run(c.rate, c.maxKeys)
		r := rows[0].SampleRate
		if !(r > 0 && r < 1) {
			t.Fatalf("rate %v, max keys %d: rows give sample rate %v", c.rate, c.maxKeys, r)
		}
		for _, p := range []string{"lru", "clock"} {
			mae := meanAbsErr(t, exact, rows, p, int(math.Ceil(1/r)))
			t.Logf("rate %v, max keys %d (rate %.4f): %s MAE %.4f", c.rate, c.maxKeys, r, p, mae)
			if mae > 0.01 {
				t.Errorf("rate %v, max keys %d: %s mean absolute error %.4f > 0.01", c.rate, c.maxKeys, p, mae)
			}
		}
	}
}

// Sampled results say so: the sample_rate column of results.csv, the
// results' metadata and the figure titles.
func TestSampledOutputsSayRate(t *testing.T) {
	dir := t.TempDir()
	trace := genTrace(t, dir, "t.arrow", smallGen(8))
	cfg := DefaultConfig()
	cfg.Traces, cfg.Policies, cfg.Sizes, cfg.OutDir, cfg.Sample = []string{trace}, []string{"lru", "sieve"}, []int{100, 1000}, filepath.Join(dir, "out"), 0.25
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasSuffix(lines[0], ",sample_rate") {
		t.Errorf("header %q", lines[0])
	}
	for _, l := range lines[1:] {
		if !strings.HasSuffix(l, ",0.25") {
			t.Errorf("row without its sample rate: %q", l)
		}
	}
	rows, err := ReadCSV(strings.NewReader(string(b)), "results.csv")
	if err != nil || rows[0].SampleRate != 0.25 {
		t.Errorf("read back: %v, %+v", err, rows)
	}
	if res.Meta.Params["sample_rate"] != "0.25" {
		t.Errorf("metadata params %v", res.Meta.Params)
	}
	if got := sampledNote(res.Rows); got != ", sampled: 25% of keys" {
		t.Errorf("figure note %q", got)
	}
	if got := sampledNote([]Row{{SampleRate: 0}}); got != "" {
		t.Errorf("figure note of exact rows %q", got)
	}
}

func TestSampleBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Sample: 1.5}, "sample rate 1.5 is not in (0, 1]"},
		{Config{Sample: -0.1}, "sample rate -0.1"},
		{Config{SampleMaxKeys: -3}, "sample max keys -3 < 0"},
		{Config{Sample: 0.1, Warmup: 10}, "--warmup cannot be combined with sampling"},
	} {
		cfg := c.cfg
		cfg.Traces, cfg.Policies, cfg.Sizes = []string{"t"}, []string{"lru"}, []int{1}
		if _, err := newPlan(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// LRUStack.Remove drops a key as a naive LRU list does, across compactions
// of the time line.
func TestLRUStackRemove(t *testing.T) {
	st, err := NewLRUStack([]int{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var list []uint64 // most recent first
	r := uint64(7)
	for i := range 60_000 {
		r = r*6364136223846793005 + 1442695040888963407
		k := (r >> 33) % 500
		if r>>60 == 0 { // about 1 in 16: remove instead
			at := slices.Index(list, k)
			if got := st.Remove(k); got != (at >= 0) {
				t.Fatalf("op %d: Remove(%d) = %v, list has it at %d", i, k, got, at)
			}
			if at >= 0 {
				list = slices.Delete(list, at, at+1)
			}
			continue
		}
		want := int64(0)
		if at := slices.Index(list, k); at >= 0 {
			want = int64(at + 1)
			list = slices.Delete(list, at, at+1)
		}
		list = slices.Insert(list, 0, k)
		if got := st.Access(k); got != want {
			t.Fatalf("op %d: distance of %d = %d, list says %d", i, k, got, want)
		}
	}
}

// A sample that holds no request is an error, not a curve of zeros.
func TestEmptySample(t *testing.T) {
	trace := genTrace(t, t.TempDir(), "t.arrow", GenConfig{Requests: 50, Keys: 5, Alpha: 0, Locality: 0, Window: 1, Seed: 2})
	cfg := DefaultConfig()
	cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots, cfg.Sample = []string{trace}, []string{"lru"}, []int{1 << 20}, false, 1e-9
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "t.arrow: a 1e-09 sample holds none of its 50 requests") {
		t.Errorf("empty sample: %v", err)
	}
}

// A sample held in memory (read once for every run) gives the rows that
// reading the trace in each run gives, at a fixed rate and with
// --sample-max-keys; the held sample has exactly the requests whose keys
// the final threshold keeps.
func TestSampleHeldMatchesStreamed(t *testing.T) {
	dir := t.TempDir()
	gc := GenConfig{Requests: 300_000, Keys: 30_000, Alpha: 0.8, Locality: 0.3, Window: 32, Seed: 11}
	path, all := genTraceKeys(t, dir, "h.arrow", gc)
	for _, base := range []Config{
		{Sample: 0.05},
		{SampleMaxKeys: 2000},
		{Sample: 0.2, SampleMaxKeys: 1500},
	} {
		run := func(hold int64) ([]Row, *traceSample) {
			t.Helper()
			prev := sampleHold
			sampleHold = hold
			defer func() { sampleHold = prev }()
			cfg := base
			cfg.Traces = []string{path}
			cfg.Policies = []string{"lru", "clock", "min", "static", "infinite", "random"}
			cfg.Sizes = []int{1, 64, 1024, 1 << 14}
			cfg.Seeds = 2
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPlan(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := p.prepareSample(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Rows {
				res.Rows[i].Seconds = 0
			}
			return res.Rows, ts
		}
		held, ts := run(1 << 30)
		streamed, ts0 := run(0)
		if ts.keys == nil || ts0.keys != nil {
			t.Fatalf("%+v: held %d keys with room, %d without", base, len(ts.keys), len(ts0.keys))
		}
		want := slices.DeleteFunc(slices.Clone(all), func(k uint64) bool { return !ts.keep(k) })
		if !slices.Equal(ts.keys, want) {
			t.Errorf("%+v: held sample of %d requests, want the %d the threshold keeps", base, len(ts.keys), len(want))
		}
		// (Compared as CSV: a row with no MIN row at its size has a NaN
		// relative_to_min, as the small sizes of a sampled run have.)
		if csvOf(t, held) != csvOf(t, streamed) {
			t.Errorf("%+v: rows from the held sample differ from the streamed ones:\n%v\n%v", base, held, streamed)
		}
	}
}

// Below 1/R a sample's miniature holds one key; a fixed-rate sampled run
// computes those sizes exactly on the whole trace, in the pass that
// prepares the sample, and every lru and clock row there equals the exact
// run's. MIN and FIFO write none there, nor lru with SampleOmitSmall.
// Over every size, resolved ones included, the sampled curves are within
// 0.01 mean absolute error of the exact ones on a Zipf-like trace.
func TestSampleExactBelowResolution(t *testing.T) {
	t.Parallel() // CPU only, no package state
	trace := genTrace(t, t.TempDir(), "z.arrow", GenConfig{Requests: 1_000_000, Keys: 1_000_000, Alpha: 0.9, Locality: 0.3, Window: 32, Seed: 35})
	const rate = 0.01
	var sizes []int
	for s := 1; s <= 1<<18; s *= 2 {
		sizes = append(sizes, s)
	}
	run := func(sample float64, omit bool) map[string]Row {
		cfg := DefaultConfig()
		cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots = []string{trace}, []string{"lru", "clock", "min"}, sizes, false
		cfg.Sample, cfg.SampleOmitSmall = sample, omit
		if sample > 0 {
			cfg.Policies = append(cfg.Policies, "fifo")
		}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]Row{}
		for _, r := range stripSeconds(res.Rows) {
			r.RelativeToMin = 0
			rows[r.Policy+"/"+strconv.Itoa(r.Size)] = r
		}
		return rows
	}
	exact, sampled, omitted := run(0, false), run(rate, false), run(rate, true)
	for _, p := range []string{"lru", "clock"} {
		var sum float64
		var small int
		for _, s := range sizes {
			k := p + "/" + strconv.Itoa(s)
			got, ok := sampled[k]
			if !ok {
				t.Fatalf("%s: no sampled row", k)
			}
			want := exact[k]
			if float64(s)*rate < 1 {
				small++
				if got != want {
					t.Errorf("%s, below 1/R: sampled row %+v, want the exact %+v", k, got, want)
				}
			} else if got.SampleRate != rate {
				t.Errorf("%s: sample rate %v, want %v", k, got.SampleRate, rate)
			}
			sum += math.Abs(got.MissRate - want.MissRate)
		}
		if small != 7 {
			t.Errorf("%s: %d sizes below 1/R, want 7 (2^0..2^6)", p, small)
		}
		if mae := sum / float64(len(sizes)); mae > 0.01 {
			t.Errorf("%s: mean absolute error %.4f over %d sizes, want <= 0.01", p, mae, len(sizes))
		} else {
			t.Logf("%s: mean absolute error %.4f over %d sizes", p, mae, len(sizes))
		}
	}
	for _, s := range sizes {
		below := float64(s)*rate < 1
		for _, p := range []string{"min", "fifo"} {
			if _, ok := sampled[p+"/"+strconv.Itoa(s)]; ok == below {
				t.Errorf("%s at %d (below 1/R: %v): row written: %v", p, s, below, ok)
			}
		}
		for _, p := range []string{"lru", "clock", "min", "fifo"} {
			if _, ok := omitted[p+"/"+strconv.Itoa(s)]; ok == below {
				t.Errorf("omitting, %s at %d (below 1/R: %v): row written: %v", p, s, below, ok)
			}
		}
	}
}

// The small caches of a sampled run are checked hit by hit against the
// policy package's LRU and CLOCK at every small size.
func TestTinyCachesMatchPolicies(t *testing.T) {
	keys := mustKeys(t, GenConfig{Requests: 50_000, Keys: 300, Alpha: 0.8, Locality: 0.3, Window: 16, Seed: 7})
	const depth = 99
	lru := newTinyLRU(depth)
	for _, k := range keys {
		lru.access(k)
	}
	for _, size := range []int{1, 2, 3, 7, 16, 64, 99} {
		ref, clk := policy.NewCLOCK(size), newTinyCLOCK(size)
		refLRU := policy.NewLRU(size)
		var lruHits int64
		for i, k := range keys {
			if got, want := clk.access(k), ref.Access(k); got != want {
				t.Fatalf("clock %d, request %d: hit %v, want %v", size, i, got, want)
			}
			if refLRU.Access(k) {
				lruHits++
			}
		}
		if got := lru.hitsAt(size); got != lruHits {
			t.Errorf("lru %d: %d hits, want %d", size, got, lruHits)
		}
	}
}

// Below 1/R, sizes above smallExactMax are not computed (their scans would
// cost more than the exact run) and write no row; those up to it are exact.
func TestSampleExactBelowResolutionBounded(t *testing.T) {
	trace := genTrace(t, t.TempDir(), "b.arrow", GenConfig{Requests: 200_000, Keys: 50_000, Alpha: 0.9, Locality: 0.3, Window: 32, Seed: 36})
	run := func(sample float64) map[int]Row {
		cfg := DefaultConfig()
		cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots = []string{trace}, []string{"lru", "clock"}, []int{1, 8, 64, 128, 512, 2048}, false
		cfg.Sample = sample
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int]Row{}
		for _, r := range stripSeconds(res.Rows) {
			if r.Policy == "clock" {
				r.RelativeToMin = 0
				rows[r.Size] = r
			}
		}
		return rows
	}
	exact, sampled := run(0), run(0.001)
	for _, s := range []int{1, 8, 64} {
		if sampled[s] != exact[s] {
			t.Errorf("clock %d: sampled row %+v, want the exact %+v", s, sampled[s], exact[s])
		}
	}
	for _, s := range []int{128, 512} {
		if r, ok := sampled[s]; ok {
			t.Errorf("clock %d, between %d and 1/R: row written %+v", s, smallExactMax, r)
		}
	}
	if r, ok := sampled[2048]; !ok || r.SampleRate != 0.001 {
		t.Errorf("clock 2048: row %+v (written: %v), want a sampled one", r, ok)
	}
}
