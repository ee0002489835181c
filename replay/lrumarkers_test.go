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
		trace := make([]uint64, 3000)
		for i := range trace {
			if rng.IntN(3) == 0 && i > 0 {
				trace[i] = trace[rng.IntN(i)] // locality
			} else {
				trace[i] = uint64(rng.IntN(universe))
			}
		}
		sizes := [][]int{{1}, {1, 2, 3, 4, 5, 6, 7, 8}, {3, 17, 64, 65, 200, 1000}, PaperSizes()[:12], {universe, 2 * universe}}[seed%5]
		warmup := int64(rng.IntN(500))
		m, err := NewLRUMarkers(sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := NewLRUStack(sizes, warmup)
		m.AccessBatch(trace)
		s.AccessBatch(trace)
		got, want := m.Curve(), s.Curve()
		if !reflect.DeepEqual(got.Hits, want.Hits) || got.Requests != want.Requests {
			t.Fatalf("seed %d sizes %v: markers %v, stack %v", seed, sizes, got.Hits, want.Hits)
		}
		for i, size := range got.Sizes {
			p, _ := policy.New("lru", size, policy.Options{})
			var hits int64
			for j, k := range trace {
				if p.Access(k) && int64(j) >= warmup {
					hits++
				}
			}
			if hits != got.Hits[i] {
				t.Fatalf("seed %d size %d: markers %d hits, LRU simulation %d", seed, size, got.Hits[i], hits)
			}
		}
	}
	if _, err := NewLRUMarkers([]int{0, 4}, 0); err == nil {
		t.Error("size 0 accepted")
	}
}
