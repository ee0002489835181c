package replay

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// LRUMarkers gives exactly the hit counts of the stack-distance method and
// of one LRU simulation per size.
func TestLRUMarkersMatchesStackAndPerSize(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		universe := 2 + rng.IntN(300)
		trace := repeatTrace(rng, 3000, universe, 3, 0)
		sizes := [][]int{{1}, {1, 2, 3, 4, 5, 6, 7, 8}, {3, 17, 64, 65, 200, 1000}, PaperSizes()[:12], {universe, 2 * universe}}[seed%5]
		warmup := int64(rng.IntN(500))
		m, err := NewLRUMarkers(sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := NewLRUStack(sizes, warmup)
		m.AccessBatch(trace)
		s.AccessBatch(trace)
		checkMarkers(t, seed, "lru", m.Curve(), s.Curve(), trace, warmup)
	}
	if _, err := NewLRUMarkers([]int{0, 4}, 0); err == nil {
		t.Error("size 0 accepted")
	}
}

// checkMarkers fails t unless the markers' curve got has the hits and
// requests of the reference curve want (a stack method) and, at each
// size, of one simulation of the policy package's name over trace.
func checkMarkers(t *testing.T, seed uint64, name string, got, want Curve, trace []uint64, warmup int64) {
	t.Helper()
	if !reflect.DeepEqual(got.Hits, want.Hits) || got.Requests != want.Requests {
		t.Fatalf("seed %d sizes %v: markers %v, stack %v", seed, got.Sizes, got.Hits, want.Hits)
	}
	for i, size := range got.Sizes {
		p, _ := policy.New(name, size, policy.Options{Trace: trace})
		if hits := policyHits(p, trace, warmup); hits != got.Hits[i] {
			t.Fatalf("seed %d size %d: markers %d hits, %s simulation %d", seed, size, got.Hits[i], name, hits)
		}
	}
}

// With its prefetches forced on (they start only once the index outgrows
// the caches), the trace fed in batches of random lengths (so the warmup
// ends inside a batch), and traces long enough to renumber the time line
// several times and to grow it, LRUMarkers still gives the hits of a naive
// LRU per size.
func TestLRUMarkersPrefetchAndBatches(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		universe := 2 + rng.IntN(2500)
		trace := repeatTrace(rng, 20000, universe, 2, 20)
		sizes := []int{1, 2, 5, 16, 33, 100, 128, 400, 1500}
		warmup := int64(rng.IntN(6000))
		m, err := NewLRUMarkers(sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		m.prefetch = true
		for rest := trace; len(rest) > 0; {
			n := min(len(rest), rng.IntN(3000))
			if rng.IntN(4) == 0 {
				for _, k := range rest[:n] {
					m.Access(k)
				}
			} else {
				m.AccessBatch(rest[:n])
			}
			rest = rest[n:]
		}
		c := m.Curve()
		if want := int64(len(trace)) - warmup; c.Requests != want {
			t.Fatalf("seed %d: %d requests counted, want %d", seed, c.Requests, want)
		}
		for i, size := range c.Sizes {
			if want := refLRUHits(trace, size, warmup); c.Hits[i] != want {
				t.Fatalf("seed %d size %d warmup %d: markers %d hits, naive LRU %d", seed, size, warmup, c.Hits[i], want)
			}
		}
	}
}

func TestLRUMarkersBadSizes(t *testing.T) {
	if _, err := NewLRUMarkers([]int{0, 4}, 0); err == nil {
		t.Error("size 0 accepted")
	}
}
