package replay

import (
	"math/rand/v2"
	"testing"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// MINMarkers equals the one-pass OPT stack and one MIN simulation per size.
func TestMINMarkersMatchesStackAndPerSize(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		universe := 2 + rng.IntN(200)
		trace := repeatTrace(rng, 2500, universe, 3, 0)
		sizes := [][]int{{1}, {1, 2, 3, 4, 5, 6, 7, 8}, {3, 17, 64, 65, 150, 1000}, PaperSizes()[:10], {universe - 1, universe, 2 * universe}}[seed%5]
		warmup := int64(rng.IntN(300))
		got, err := MINMarkers(trace, nil, sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		want, err := MINCurve(trace, nil, sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		checkMarkers(t, seed, "min", got, want, trace, warmup)
	}
	// The textbook Belady example: 9 faults with 3 frames.
	ref := []uint64{7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1}
	c, _ := MINMarkers(ref, nil, []int{3}, 0)
	if c.Misses(0) != 9 {
		t.Errorf("Belady example: %d misses, want 9", c.Misses(0))
	}
}

// With its prefetches forced on (they start only once the index outgrows
// the caches), on traces where the largest size evicts and where it does
// not, MIN markers give the hits of a naive MIN per size.
func TestMINMarkersPrefetchMatchesNaive(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		universe := 2 + rng.IntN(1200)
		trace := repeatTrace(rng, 6000, universe, 2, 30)
		sizes := []int{1, 2, 3, 8, 40, 41, 256, 700}
		warmup := int64(rng.IntN(2000))
		next, err := policy.NextUse32Cancel(trace, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := minMarkersRun(nil, trace, next, sizes, warmup, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, size := range c.Sizes {
			if want := refMINHits(trace, size, warmup); c.Hits[i] != want {
				t.Fatalf("seed %d size %d warmup %d: markers %d hits, naive MIN %d", seed, size, warmup, c.Hits[i], want)
			}
		}
	}
}
