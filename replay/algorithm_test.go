package replay

import (
	"context"
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

// Auto runs lru and min once per size below OnePassFrom sizes and in one
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
		cfg := Config{Traces: []string{"t"}, Policies: []string{"lru", "min", "clock", "infinite"}, Algorithm: c.alg, MINPerSize: c.minPerSize}
		for i := range c.sizes {
			cfg.Sizes = append(cfg.Sizes, 1<<i)
		}
		if err := cfg.check(); err != nil {
			t.Fatal(err)
		}
		units := map[string]int{}
		for _, u := range grid(&cfg) {
			units[u.policy]++
		}
		want := func(onePass bool) int {
			if onePass {
				return 1
			}
			return c.sizes
		}
		if units["lru"] != want(c.lru) || units["min"] != want(c.min) || units["clock"] != c.sizes || units["infinite"] != 1 {
			t.Errorf("%s, min per size %v, %d sizes: units %v", c.alg, c.minPerSize, c.sizes, units)
		}
	}
	cfg := Config{Traces: []string{"t"}, Policies: []string{"lru"}, Sizes: []int{1}, Algorithm: "fast"}
	if err := cfg.check(); err == nil {
		t.Error("an unknown algorithm passed the check")
	}
}
