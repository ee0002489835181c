package replay

import (
	"context"
	"sync"
	"testing"

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

// BenchmarkLRUCurve26 is the one-pass LRU curve at the paper's 26 sizes.
func BenchmarkLRUCurve26(b *testing.B) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		c, _ := LRUCurve(NewSliceSource(tr), PaperSizes(), 0)
		b.ReportMetric(c.MissRate(16), "missrate@64K")
	}
	reportRate(b, len(tr))
}

// BenchmarkLRUMarkers26 is the one-pass LRU curve at the paper's 26 sizes
// with markers (what `crawltrace replay` runs for lru).
func BenchmarkLRUMarkers26(b *testing.B) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		m, _ := NewLRUMarkers(PaperSizes(), 0)
		m.AccessBatch(tr)
		b.ReportMetric(m.Curve().MissRate(16), "missrate@64K")
	}
	reportRate(b, len(tr))
}

// BenchmarkMINMarkers26 is the one-pass MIN curve at the paper's 26 sizes
// with bucket heaps (what `crawltrace replay` runs for min), next-use pass
// included.
func BenchmarkMINMarkers26(b *testing.B) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		c, _ := MINMarkers(tr, nil, PaperSizes(), 0)
		b.ReportMetric(c.MissRate(16), "missrate@64K")
	}
	reportRate(b, len(tr))
}

// BenchmarkMINCurve26 is the one-pass MIN curve at the paper's 26 sizes,
// next-use pass included.
func BenchmarkMINCurve26(b *testing.B) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		c, _ := MINCurve(tr, nil, PaperSizes(), 0)
		b.ReportMetric(c.MissRate(16), "missrate@64K")
	}
	reportRate(b, len(tr))
}

// BenchmarkLRUSingleSize is one per-size LRU simulation (size 2^16), the
// cost the one-pass curve replaces 26 times over.
func BenchmarkLRUSingleSize(b *testing.B) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		cfg := Config{}
		hits, _, err := simulate(context.Background(), &cfg, "bench", "lru", 1<<16, policy.Options{Trace: tr}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(1-float64(hits)/float64(len(tr)), "missrate@64K")
	}
	reportRate(b, len(tr))
}

// BenchmarkMINSingleSize is one per-size MIN simulation (policy package,
// size 2^16, next-use pass included), to compare with the one-pass curve.
func BenchmarkMINSingleSize(b *testing.B) {
	tr := benchTrace()
	b.SetBytes(8 * int64(len(tr)))
	b.ResetTimer()
	for b.Loop() {
		cfg := Config{}
		hits, _, err := simulate(context.Background(), &cfg, "bench", "min", 1<<16, policy.Options{Trace: tr}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(1-float64(hits)/float64(len(tr)), "missrate@64K")
	}
	reportRate(b, len(tr))
}
