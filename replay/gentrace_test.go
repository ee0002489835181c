package replay

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func TestScrambleKeyPinned(t *testing.T) {
	// splitmix64 outputs for state 0, 1, 2 (the reference sequence
	// starting from seed 0 is e220a8397b1dcdaf, 6e789e6aa1b965f4, ...).
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for i, w := range want {
		if got := ScrambleKey(uint64(i) * 0x9e3779b97f4a7c15); got != w {
			t.Errorf("ScrambleKey(%d*golden) = %#x, want %#x", i, got, w)
		}
	}
}

func TestGeneratePinned(t *testing.T) {
	cfg := GenConfig{Requests: 8, Keys: 1000, Alpha: 0.9, Locality: 0.5, Window: 4, Seed: 7}
	got := mustKeys(t, cfg)
	want := pinnedGen
	if !slices.Equal(got, want) {
		t.Errorf("Generate(%+v) =\n%#v\nwant\n%#v", cfg, got, want)
	}
	again, _ := GenerateKeys(cfg)
	if !slices.Equal(got, again) {
		t.Error("Generate is not deterministic")
	}
	cfg.Seed = 8
	other, _ := GenerateKeys(cfg)
	if slices.Equal(got, other) {
		t.Error("seeds 7 and 8 give the same trace")
	}
}

var pinnedGen = []uint64{0xe1efefb5d14f69ea, 0xe1efefb5d14f69ea, 0xe220a8397b1dcdaf, 0xe1efefb5d14f69ea, 0xe1efefb5d14f69ea, 0xc4729bd002541e7a, 0x78ab977c3027178, 0xc4729bd002541e7a}

func TestZipfFrequencies(t *testing.T) {
	for _, alpha := range []float64{0, 0.6, 1, 1.4} {
		cfg := GenConfig{Requests: 200_000, Keys: 50, Alpha: alpha, Window: 1, Seed: 3}
		keys := mustKeys(t, cfg)
		count := map[uint64]int{}
		for _, k := range keys {
			count[k]++
		}
		var norm float64
		for r := 1; r <= 50; r++ {
			norm += math.Pow(float64(r), -alpha)
		}
		for _, r := range []int{0, 1, 9, 49} {
			p := math.Pow(float64(r+1), -alpha) / norm
			exp := p * float64(cfg.Requests)
			got := float64(count[ScrambleKey(uint64(r))])
			if sd := math.Sqrt(exp * (1 - p)); math.Abs(got-exp) > 5*sd+1 {
				t.Errorf("alpha %v rank %d: %v requests, expected %.0f +- %.0f", alpha, r, got, exp, sd)
			}
		}
	}
}

func TestLocalityRaisesHits(t *testing.T) {
	hitRate := func(loc float64) float64 {
		keys, _ := GenerateKeys(GenConfig{Requests: 50_000, Keys: 10_000, Alpha: 0.5, Locality: loc, Window: 16, Seed: 1})
		c, _ := LRUCurve(NewSliceSource(keys), []int{32}, 0)
		return float64(c.Hits[0]) / float64(c.Requests)
	}
	if lo, hi := hitRate(0), hitRate(0.5); !(hi > lo+0.3) {
		t.Errorf("LRU-32 hit rate: locality 0 %.3f, locality 0.5 %.3f; want locality to add > 0.3", lo, hi)
	}
}

func TestGenerateFileAndBadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.arrow")
	cfg := GenConfig{Requests: 70_000, Keys: 100, Alpha: 1.1, Locality: 0.2, Window: 8, Seed: 5}
	if err := GenerateFile(path, cfg); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path, FormatCondensed)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := GenerateKeys(cfg)
	if !slices.Equal(got, want) {
		t.Fatal("file differs from GenerateKeys")
	}
	for _, bad := range []GenConfig{{Requests: -1, Keys: 1, Window: 1}, {Keys: 0, Window: 1}, {Keys: 1, Alpha: -1, Window: 1},
		{Keys: 1, Locality: 1.5, Window: 1}, {Keys: 1, Window: 0}, {Keys: 1, Alpha: math.NaN(), Window: 1}} {
		if err := GenerateFile(path, bad); !errors.Is(err, tracefile.ErrBadInput) {
			t.Errorf("%+v: err %v, want ErrBadInput", bad, err)
		}
	}
}
