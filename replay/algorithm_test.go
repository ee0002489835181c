package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// lru and min give the same rows one pass for all sizes and one run per
// size, at few sizes and at many.
func TestAlgorithmsAgree(t *testing.T) {
	trace := genTrace(t, t.TempDir(), "t.arrow", GenConfig{Requests: 30_000, Keys: 4_000, Alpha: 0.8, Locality: 0.3, Window: 32, Seed: 11})
	for _, sizes := range [][]int{{100}, {1, 7, 300}, {1, 2, 5, 16, 64, 250, 1000, 4000, 1 << 20}} {
		run := func(alg string) []Row {
			cfg := DefaultConfig()
			cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots, cfg.Warmup, cfg.Algorithm = []string{trace}, []string{"lru", "min"}, sizes, false, 500, alg
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 2*len(sizes) {
				t.Fatalf("%s: %d rows for %d sizes", alg, len(res.Rows), len(sizes))
			}
			return res.Rows
		}
		one, per := run(AlgorithmOnePass), run(AlgorithmPerSize)
		if got, want := csvOf(t, per), csvOf(t, one); got != want {
			t.Errorf("sizes %v: per size\n%s\none pass\n%s", sizes, got, want)
		}
		if got, want := csvOf(t, run(AlgorithmAuto)), csvOf(t, one); got != want {
			t.Errorf("sizes %v: auto\n%s\none pass\n%s", sizes, got, want)
		}
	}
}

// Auto runs lru, min and static once per size below OnePassFrom sizes and in one
// pass from there; the flags force either.
func TestAlgorithmChoice(t *testing.T) {
	for _, c := range []struct {
		alg        string
		minPerSize bool
		sizes      int
		lru, min   bool // one pass
	}{
		{AlgorithmAuto, false, 1, false, false},
		{AlgorithmAuto, false, OnePassFrom - 1, false, false},
		{AlgorithmAuto, false, OnePassFrom, true, true},
		{AlgorithmAuto, false, 26, true, true},
		{AlgorithmAuto, true, 26, true, false},
		{AlgorithmOnePass, false, 1, true, true},
		{AlgorithmOnePass, true, 1, true, false},
		{AlgorithmPerSize, false, 26, false, false},
	} {
		cfg := Config{Traces: []string{"t"}, Policies: []string{"lru", "min", "clock", "infinite", "static"}, Algorithm: c.alg, MINPerSize: c.minPerSize}
		for i := range c.sizes {
			cfg.Sizes = append(cfg.Sizes, 1<<i)
		}
		p, err := newPlan(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		units := map[string]int{}
		for _, u := range p.units {
			units[u.policy]++
		}
		want := func(onePass bool) int {
			if onePass {
				return 1
			}
			return c.sizes
		}
		// static follows the rule lru does (MINPerSize is min's alone).
		if units["lru"] != want(c.lru) || units["min"] != want(c.min) || units["clock"] != c.sizes || units["infinite"] != 1 || units["static"] != want(c.lru) {
			t.Errorf("%s, min per size %v, %d sizes: units %v", c.alg, c.minPerSize, c.sizes, units)
		}
	}
	cfg := Config{Traces: []string{"t"}, Policies: []string{"lru"}, Sizes: []int{1}, Algorithm: "fast"}
	if _, err := newPlan(context.Background(), cfg); err == nil {
		t.Error("an unknown algorithm passed the check")
	}
}

// static gives the same rows from its one-pass curve as from one run per
// size, with and without warmup (one that ends inside the trace) and
// charged preloads, exact and sampled; the curve is one unit of the grid
// and, like lru's and min's, measures nothing for memory.csv, where the
// runs per size do.
func TestStaticAlgorithmsAgree(t *testing.T) {
	dir := t.TempDir()
	trace := genTrace(t, dir, "t.arrow", GenConfig{Requests: 30_000, Keys: 3_000, Alpha: 0.7, Locality: 0.3, Window: 32, Seed: 12})
	sizes := []int{1, 3, 16, 100, 999, 2500, 1 << 20}
	for _, c := range []struct {
		warmup int64
		charge bool
		sample float64
	}{{0, false, 0}, {0, true, 0}, {7_777, false, 0}, {7_777, true, 0}, {0, true, 0.2}} {
		name := fmt.Sprintf("warmup %d, charge %v, sample %v", c.warmup, c.charge, c.sample)
		run := func(alg string) *Results {
			cfg := DefaultConfig()
			cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots, cfg.Algorithm = []string{trace}, []string{"static"}, sizes, false, alg
			cfg.Warmup, cfg.ChargeStatic, cfg.Sample = c.warmup, c.charge, c.sample
			cfg.OutDir = filepath.Join(dir, fmt.Sprintf("%s-%d-%v-%v", alg, c.warmup, c.charge, c.sample))
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Sampled, static writes no row below 1/R (see samplesmall.go).
			want := 0
			for _, s := range sizes {
				if c.sample == 0 || float64(s)*c.sample >= 1 {
					want++
				}
			}
			if len(res.Rows) != want {
				t.Fatalf("%s, %s: %d rows for %d sizes, want %d", name, alg, len(res.Rows), len(sizes), want)
			}
			return res
		}
		one, per := run(AlgorithmOnePass), run(AlgorithmPerSize)
		if got, want := csvOf(t, one.Rows), csvOf(t, per.Rows); got != want {
			t.Errorf("%s: one pass\n%s\nper size\n%s", name, got, want)
		}
		if got, want := csvOf(t, run(AlgorithmAuto).Rows), csvOf(t, one.Rows); got != want {
			t.Errorf("%s: auto\n%s\none pass\n%s", name, got, want)
		}
		wantMeasured := len(sizes)
		if c.sample > 0 {
			wantMeasured = 0 // miniatures
		}
		if len(one.Memory) != 0 || len(per.Memory) != wantMeasured {
			t.Errorf("%s: %d measured one pass, %d per size, want 0 and %d", name, len(one.Memory), len(per.Memory), wantMeasured)
		}
	}
	// Auto: one static unit from OnePassFrom sizes, one per size below.
	for n, want := range map[int]int{OnePassFrom: 1, 26: 1, OnePassFrom - 1: OnePassFrom - 1, 1: 1} {
		cfg := Config{Traces: []string{trace}, Policies: []string{"static"}, Sizes: PaperSizes()[:n]}
		p, err := newPlan(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		us := p.units
		if len(us) != want || (want == 1 && n > 1 && us[0].size != 0) {
			t.Errorf("auto, %d sizes: units %v, want %d", n, us, want)
		}
	}
}
