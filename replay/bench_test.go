package replay

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// The benchmark trace: Zipf 0.9, 4M requests over 400K keys, locality 0.3
// (the target is 20M / 2M; costs scale as n log n, and MIN's
// memory as 16 bytes per request).
var benchTrace = sync.OnceValue(func() []uint64 {
	keys, err := GenerateKeys(GenConfig{Requests: 4 << 20, Keys: 400_000, Alpha: 0.9, Locality: 0.3, Window: 64, Seed: 1})
	if err != nil {
		panic(err)
	}
	return keys
})

func reportRate(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

// benchMissRate times run over the benchmark trace and reports the miss
// rate at 2^16 it returns, and the requests per second.
func benchMissRate(b *testing.B, run func(tr []uint64) float64) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		b.ReportMetric(run(tr), "missrate@64K")
	}
	reportRate(b, len(tr))
}

// simulateMissRate is the miss rate of one per-size simulation of name at
// 2^16 over tr.
func simulateMissRate(b *testing.B, name string, tr []uint64) float64 {
	hits, _, err := (&plan{}).simulate(context.Background(), "bench", name, 1<<16, policy.Options{Trace: tr}, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return 1 - float64(hits)/float64(len(tr))
}

// BenchmarkLRUCurve26 is the one-pass LRU curve at the paper's 26 sizes.
func BenchmarkLRUCurve26(b *testing.B) {
	benchMissRate(b, func(tr []uint64) float64 {
		c, _ := LRUCurve(NewSliceSource(tr), PaperSizes(), 0)
		return c.MissRate(16)
	})
}

// BenchmarkLRUMarkers26 is the one-pass LRU curve at the paper's 26 sizes
// with markers (what `crawltrace replay` runs for lru).
func BenchmarkLRUMarkers26(b *testing.B) {
	benchMissRate(b, func(tr []uint64) float64 {
		m, _ := NewLRUMarkers(PaperSizes(), 0)
		m.AccessBatch(tr)
		return m.Curve().MissRate(16)
	})
}

// BenchmarkMINMarkers26 is the one-pass MIN curve at the paper's 26 sizes
// with bucket heaps (what `crawltrace replay` runs for min), next-use pass
// included.
func BenchmarkMINMarkers26(b *testing.B) {
	benchMissRate(b, func(tr []uint64) float64 {
		c, _ := MINMarkers(tr, nil, PaperSizes(), 0)
		return c.MissRate(16)
	})
}

// BenchmarkMINCurve26 is the one-pass MIN curve at the paper's 26 sizes,
// next-use pass included.
func BenchmarkMINCurve26(b *testing.B) {
	benchMissRate(b, func(tr []uint64) float64 {
		c, _ := MINCurve(tr, nil, PaperSizes(), 0)
		return c.MissRate(16)
	})
}

// BenchmarkLRUSingleSize is one per-size LRU simulation (size 2^16), the
// cost the one-pass curve replaces 26 times over.
func BenchmarkLRUSingleSize(b *testing.B) {
	benchMissRate(b, func(tr []uint64) float64 { return simulateMissRate(b, "lru", tr) })
}

// BenchmarkMINSingleSize is one per-size MIN simulation (policy package,
// size 2^16, next-use pass included), to compare with the one-pass curve.
func BenchmarkMINSingleSize(b *testing.B) {
	benchMissRate(b, func(tr []uint64) float64 { return simulateMissRate(b, "min", tr) })
}

// crossoverSizes returns k sizes spread evenly (in log scale) over 2^10 ..
// 2^20, the range where a crawler's cache sizes matter.
func crossoverSizes(k int) []int {
	if k == 1 {
		return []int{1 << 16}
	}
	var s []int
	for i := range k {
		s = append(s, int(math.Round(math.Exp2(10+10*float64(i)/float64(k-1)))))
	}
	return s
}

// BenchmarkOnePassCrossover measures, for k sizes, the one-pass curve of
// lru ([LRUMarkers]) and min ([MINMarkers]) against one simulation per size
// (policy package, next-use times shared), to find the number of sizes from
// which the one pass is cheaper (docs/benchmarks.md, "One pass or one run
// per size"). Reported: wall seconds per algorithm as "s-onepass"
// and "s-persize" (one b.N iteration runs both).
func BenchmarkOnePassCrossover(b *testing.B) {
	tr := benchTrace()
	next := policy.NextUse(tr)
	for _, name := range []string{"lru", "min"} {
		for _, k := range []int{1, 2, 3, 4, 6, 8, 12} {
			sizes := crossoverSizes(k)
			b.Run(fmt.Sprintf("%s/sizes=%d", name, k), func(b *testing.B) {
				var one, per time.Duration
				for b.Loop() {
					t0 := time.Now()
					if name == "lru" {
						m, _ := NewLRUMarkers(sizes, 0)
						m.AccessBatch(tr)
					} else if _, err := MINMarkers(tr, next, sizes, 0); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					for _, s := range sizes {
						p, err := policy.New(name, s, policy.Options{Trace: tr, NextUse: next})
						if err != nil {
							b.Fatal(err)
						}
						for _, key := range tr {
							p.Access(key)
						}
					}
					one, per = one+t1.Sub(t0), per+time.Since(t1)
				}
				b.ReportMetric(one.Seconds()/float64(b.N), "s-onepass")
				b.ReportMetric(per.Seconds()/float64(b.N), "s-persize")
				b.ReportMetric(per.Seconds()/one.Seconds(), "persize/onepass")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
