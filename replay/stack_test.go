package replay

import (
	"math/rand/v2"
	"testing"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// refLRU is a deliberately naive LRU: a slice ordered most recent first.
type refLRU struct {
	k    int
	list []uint64
}

func (r *refLRU) access(key uint64) bool {
	for i, v := range r.list {
		if v == key {
			copy(r.list[1:i+1], r.list[:i])
			r.list[0] = key
			return true
		}
	}
	if len(r.list) == r.k {
		r.list = r.list[:r.k-1]
	}
	r.list = append([]uint64{key}, r.list...)
	return false
}

// refMIN is a deliberately naive Belady MIN: on a miss with a full cache it
// scans for the cached key whose next request is farthest away.
func refMINHits(trace []uint64, k int, warmup int64) int64 {
	next, _ := NextUse(trace)
	cached := map[uint64]int64{} // key -> next use
	var hits int64
	for t, key := range trace {
		nu := next[t]
		if nu < 0 {
			nu = never
		}
		if _, ok := cached[key]; ok {
			if int64(t) >= warmup {
				hits++
			}
		} else if len(cached) == k {
			var victim uint64
			far := int64(-1)
			for ck, cn := range cached {
				if cn > far || (cn == far && ck < victim) {
					victim, far = ck, cn
				}
			}
			delete(cached, victim)
		}
		cached[key] = nu
	}
	return hits
}

func refLRUHits(trace []uint64, k int, warmup int64) int64 {
	r := &refLRU{k: k}
	var hits int64
	for t, key := range trace {
		if r.access(key) && int64(t) >= warmup {
			hits++
		}
	}
	return hits
}

func randomTrace(rng *rand.Rand, n, keys int) []uint64 {
	tr := make([]uint64, n)
	for i := range tr {
		// Skewed: small keys are hot, with bursts of repeats.
		switch rng.IntN(4) {
		case 0:
			if i > 0 {
				tr[i] = tr[i-1-rng.IntN(min(i, 8))]
				continue
			}
			fallthrough
		case 1:
			tr[i] = uint64(rng.IntN(keys))
		default:
			tr[i] = uint64(rng.IntN(1 + rng.IntN(keys)))
		}
	}
	return tr
}

// repeatTrace returns n keys below universe in which, with probability
// 1/oneIn, a request repeats an earlier one: any earlier request when
// window is 0, else one of the window requests before it.
func repeatTrace(rng *rand.Rand, n, universe, oneIn, window int) []uint64 {
	tr := make([]uint64, n)
	for i := range tr {
		switch {
		case rng.IntN(oneIn) != 0 || i == 0:
			tr[i] = uint64(rng.IntN(universe))
		case window == 0:
			tr[i] = tr[rng.IntN(i)]
		default:
			tr[i] = tr[i-1-rng.IntN(min(i, window))]
		}
	}
	return tr
}

// policyHits feeds trace to p and counts its hits after the warmup, as
// Run's simulate counts them.
func policyHits(p policy.Policy, trace []uint64, warmup int64) int64 {
	var hits int64
	for j, k := range trace {
		if p.Access(k) && int64(j) >= warmup {
			hits++
		}
	}
	return hits
}

func sizes1to(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

func TestOnePassEqualsPerSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := sizes1to(64)
	for iter := 0; iter < 12; iter++ {
		n := 200 + rng.IntN(1500)
		keys := 2 + rng.IntN(150)
		tr := randomTrace(rng, n, keys)
		warmup := int64(0)
		if iter%3 == 1 {
			warmup = int64(rng.IntN(n / 2))
		}
		lru, err := LRUCurve(NewSliceSource(tr), sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		mn, err := MINCurve(tr, nil, sizes, warmup)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range sizes {
			if want := refLRUHits(tr, k, warmup); lru.Hits[i] != want {
				t.Fatalf("iter %d (n=%d keys=%d warmup=%d): LRU size %d: one-pass %d hits, per-size %d", iter, n, keys, warmup, k, lru.Hits[i], want)
			}
			if want := refMINHits(tr, k, warmup); mn.Hits[i] != want {
				t.Fatalf("iter %d (n=%d keys=%d warmup=%d): MIN size %d: one-pass %d hits, per-size %d", iter, n, keys, warmup, k, mn.Hits[i], want)
			}
		}
		if lru.Requests != int64(n)-warmup || mn.Requests != lru.Requests {
			t.Fatalf("requests: lru %d min %d, want %d", lru.Requests, mn.Requests, int64(n)-warmup)
		}
		if lru.Distinct != mn.Distinct {
			t.Fatalf("distinct: lru %d min %d", lru.Distinct, mn.Distinct)
		}
	}
}

// TestStackTruncation checks that cutting the stacks at the largest size
// (MIN) and compacting the time line (LRU) on long traces with many keys
// give the same answers as the naive models.
func TestStackLongTrace(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tr := randomTrace(rng, 30000, 5000)
	sizes := []int{1, 3, 17, 100, 257}
	lru, _ := LRUCurve(NewSliceSource(tr), sizes, 0)
	mn, _ := MINCurve(tr, nil, sizes, 0)
	for i, k := range sizes {
		if want := refLRUHits(tr, k, 0); lru.Hits[i] != want {
			t.Errorf("LRU size %d: %d, want %d", k, lru.Hits[i], want)
		}
		if want := refMINHits(tr, k, 0); mn.Hits[i] != want {
			t.Errorf("MIN size %d: %d, want %d", k, mn.Hits[i], want)
		}
	}
}

func TestLRUStackDistances(t *testing.T) {
	s, _ := NewLRUStack([]int{1}, 0)
	// a b c a a b c: distances 0 0 0 3 1 3 3
	want := []int64{0, 0, 0, 3, 1, 3, 3}
	for i, k := range []uint64{1, 2, 3, 1, 1, 2, 3} {
		if d := s.Access(k); d != want[i] {
			t.Fatalf("request %d: distance %d, want %d", i, d, want[i])
		}
	}
}
