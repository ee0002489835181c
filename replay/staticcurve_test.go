package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// staticPerSize is the reference: policy.Static built over the whole trace
// at each size, replayed over it, its hits counted after the warmup as
// Run's simulate counts them.
func staticPerSize(t *testing.T, trace []uint64, sizes []int, warmup int64, charge bool) []int64 {
	t.Helper()
	hits := make([]int64, len(sizes))
	for i, size := range sizes {
		p, err := policy.NewStatic(size, policy.Options{Trace: trace, ChargeStaticLoads: charge})
		if err != nil {
			t.Fatal(err)
		}
		hits[i] = policyHits(p, trace, warmup)
	}
	return hits
}

// The curve's hits at every size are those of one STATIC per size, on
// traces with many ties in popularity, with no repeats, of one key, and
// with warmups that end anywhere (between a key's first and later
// requests, after the whole trace), with the preloads free or charged.
func TestStaticCurveMatchesPerSize(t *testing.T) {
	t.Parallel() // CPU only, no package state
	rng := rand.New(rand.NewPCG(3, 17))
	traces := map[string][]uint64{}
	for n := range 4 {
		// Skewed over a small universe: many keys share a count.
		universe := 5 + rng.IntN(60)
		tr := make([]uint64, 400+rng.IntN(800))
		for i := range tr {
			tr[i] = uint64(rng.IntN(1 + rng.IntN(universe)))
			if i > 0 && rng.IntN(4) == 0 {
				tr[i] = tr[rng.IntN(i)]
			}
		}
		traces[fmt.Sprintf("ties-%d", n)] = tr
	}
	distinct := make([]uint64, 300)
	for i := range distinct {
		distinct[i] = uint64(1000 - i)
	}
	traces["all-distinct"] = distinct
	traces["one-key"] = slices.Repeat([]uint64{42}, 250)
	zipf := mustKeys(t, GenConfig{Requests: 3000, Keys: 400, Alpha: 0.9, Locality: 0.2, Window: 8, Seed: 4})
	traces["zipf"] = zipf
	for name, tr := range traces {
		d := len(uniq(tr))
		var sizes []int
		for s := 1; s <= d+2; s++ {
			sizes = append(sizes, s)
		}
		n := int64(len(tr))
		for _, warmup := range []int64{0, 1, 2, n / 3, n / 2, n - 1, n, n + 7} {
			for _, charge := range []bool{false, true} {
				s, err := NewStaticCurve(sizes, warmup, charge)
				if err != nil {
					t.Fatal(err)
				}
				// In uneven batches, as a source gives them.
				for i := 0; i < len(tr); {
					j := min(len(tr), i+1+rng.IntN(97))
					s.AccessBatch(tr[i:j])
					i = j
				}
				c := s.Curve()
				want := staticPerSize(t, tr, sizes, warmup, charge)
				if !slices.Equal(c.Hits, want) {
					t.Fatalf("%s, warmup %d, charge %v: curve %v\nper size %v", name, warmup, charge, c.Hits, want)
				}
				if c.Requests != max(n-warmup, 0) || c.Distinct != int64(d) || !slices.Equal(c.Sizes, sizes) {
					t.Fatalf("%s, warmup %d: %d requests, %d distinct, sizes %v", name, warmup, c.Requests, c.Distinct, c.Sizes)
				}
			}
		}
	}
}

func uniq(keys []uint64) map[uint64]bool {
	m := map[uint64]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// Known answers, where the tie-break, the warmup and the charging each
// change the result. Trace A B B A C C (A=1, B=2, C=3), warmup 2: each key
// has 2 requests, so the ranking is by first request, A B C; the counted
// requests are B A C C, one of A, one of B, both of C, and only C's first
// request is counted.
//
//	free:    size 1 {A}: 1 hit, size 2 {A,B}: 2, size 3: 4
//	charged: A 1, B 1, C 2-1 = 1: 1, 2, 3
//
// Ranking by the counted requests would put C first (2 hits at size 1),
// breaking ties the other way too; counting the warmup requests would give
// A 2 hits; charging A's first request, made in the warmup, would give 0.
func TestStaticCurveKnownAnswers(t *testing.T) {
	trace := []uint64{1, 2, 2, 1, 3, 3}
	for _, c := range []struct {
		charge bool
		want   []int64
	}{{false, []int64{1, 2, 4, 4}}, {true, []int64{1, 2, 3, 3}}} {
		s, err := NewStaticCurve([]int{4, 2, 1, 3, 2}, 2, c.charge)
		if err != nil {
			t.Fatal(err)
		}
		s.AccessBatch(trace)
		got := s.Curve()
		if !slices.Equal(got.Sizes, []int{1, 2, 3, 4}) || !slices.Equal(got.Hits, c.want) || got.Requests != 4 {
			t.Errorf("charge %v: sizes %v hits %v requests %d; want 1..4, %v, 4", c.charge, got.Sizes, got.Hits, got.Requests, c.want)
		}
		// More requests after Curve: A now leads (3 requests).
		s.Access(1)
		if got := s.Curve(); got.Hits[0] != 2 || got.Requests != 5 {
			t.Errorf("charge %v: after one more A, size 1 has %d hits of %d, want 2 of 5", c.charge, got.Hits[0], got.Requests)
		}
	}
	for _, sizes := range [][]int{nil, {0, 4}, {1, policy.MaxSize + 1}} {
		if _, err := NewStaticCurve(sizes, 0, false); err == nil {
			t.Errorf("sizes %v accepted", sizes)
		}
	}
}

// staticRank orders keys by count, descending, then by number, packed or
// not, whatever the counts (huge ones cannot be packed).
func TestStaticRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for n := range 40 {
		counts := make([]int64, n*7)
		for i := range counts {
			counts[i] = 1 + rng.Int64N(int64(1+n%5))
			if n%4 == 3 && rng.IntN(3) == 0 {
				counts[i] = 1<<62 + rng.Int64N(3) // too large to pack beside the number
			}
		}
		want := make([]uint64, len(counts))
		for i := range want {
			want[i] = uint64(i)
		}
		sort.SliceStable(want, func(a, b int) bool { return counts[want[a]] > counts[want[b]] })
		for _, pack := range []bool{true, false} {
			if got := staticRank(counts, pack); !slices.Equal(got, want) {
				t.Fatalf("counts %v, pack %v: %v, want %v", counts, pack, got, want)
			}
		}
	}
}
