package policy

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"
)

// Benchmark traces: 4M requests drawn from a Zipf(0.9) distribution over
// 400K keys (rank r has weight 1/r^0.9), scrambled into 64-bit
// fingerprint-like keys. Generated once per process, outside the timer.
const (
	benchRequests = 4 << 20
	benchKeys     = 400_000
	benchZipfS    = 0.9
)

var benchTrace = sync.OnceValue(func() []uint64 {
	return zipfTrace(1, benchRequests, benchKeys, benchZipfS)
})

// zipfTrace draws n requests over u keys with P(rank r) proportional to
// 1/r^s, by inverting the cumulative distribution with a binary search.
func zipfTrace(seed uint64, n, u int, s float64) []uint64 {
	cdf := make([]float64, u)
	sum := 0.0
	for r := range cdf {
		sum += 1 / math.Pow(float64(r+1), s)
		cdf[r] = sum
	}
	rng := splitmix{seed}
	out := make([]uint64, n)
	for i := range out {
		x := float64(rng.next()>>11) / (1 << 53) * sum
		r := sort.SearchFloat64s(cdf, x)
		out[i] = mix64(uint64(r) ^ 0x5EED)
	}
	return out
}

// BenchmarkPolicies replays the Zipf trace through every policy at cache
// sizes 2^10, 2^16 and 2^22. Each iteration is one pass over the whole
// trace with a fresh policy; building the policy (MIN's next-use pass,
// STATIC's popularity pass) is not timed. Reported: requests/s and ns per
// request of wall time, requests per second of process CPU time (robust
// when other processes share the cores), and the hit ratio.
func BenchmarkPolicies(b *testing.B) {
	trace := benchTrace()
	next := NextUse(trace)
	for _, name := range Names() {
		for _, lg := range []int{10, 16, 22} {
			size := 1 << lg
			b.Run(fmt.Sprintf("%s/size=2^%d", name, lg), func(b *testing.B) {
				hits := 0
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					runtime.GC() // do not charge the last policy's garbage to this one
					p, err := New(name, size, Options{Seed: 1, Trace: trace, NextUse: next})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					c0 := cpuTime()
					h := 0
					for _, k := range trace {
						if p.Access(k) {
							h++
						}
					}
					cpu += cpuTime() - c0
					hits = h
				}
				reqs := float64(b.N) * float64(len(trace))
				b.ReportMetric(reqs/b.Elapsed().Seconds(), "req/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/reqs, "ns/req")
				b.ReportMetric(float64(hits)/float64(len(trace)), "hit-ratio")
				if cpu > 0 {
					b.ReportMetric(reqs/cpu.Seconds(), "cpu-req/s")
				}
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
