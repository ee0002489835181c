package recorder

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// Benchmarks of long-crawl machinery. The large sizes are meant to be run
// one per process (scripts/bench-long.sh), so that the process's peak RSS
// (VmHWM) belongs to that size alone.

// benchSizes reads the sizes to run from CRAWLTRACE_BENCH_SIZES (comma
// separated, e.g. "1000000,20000000"), or def.
func benchSizes(def ...int) []int {
	v := os.Getenv("CRAWLTRACE_BENCH_SIZES")
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func heapInuse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// benchURL is queued URL i of 10,000 servers, about 45 bytes.
func benchURL(i int) string {
	return fmt.Sprintf("http://host%04d.example.com/dir/page%09d.html", i%10000, i)
}

// BenchmarkFrontierQueued queues N URLs over 10,000 servers in a bfs
// frontier kept in memory and in one spilling to disk as under
// --memory 512MiB (queues spill past 256 MiB), and reports the heap in use after a GC, bytes per queued URL
// and the process's peak RSS.
func BenchmarkFrontierQueued(b *testing.B) {
	for _, kind := range []string{"memory", "disk"} {
		for _, n := range benchSizes(1_000_000) {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				for range b.N {
					base := heapInuse()
					f := newFrontier(OrderBFS, 1)
					if kind == "disk" {
						store, err := frontier.Open(filepath.Join(b.TempDir(), "frontier"))
						if err != nil {
							b.Fatal(err)
						}
						defer store.Close()
						// As the CLI does for --memory 512MiB with no
						// workers: queues spill past half the budget,
						// and the heap's soft limit is the budget plus
						// MemoryAllowance less 64 MiB.
						f.SpillTo(store, 256<<20)
						cfg := Config{Memory: 512 << 20}
						defer debug.SetMemoryLimit(debug.SetMemoryLimit(cfg.Memory + MemoryAllowance(&cfg) - 64<<20))
					}
					start := time.Now()
					for i := range n {
						f.Add(benchURL(i))
					}
					el := time.Since(start)
					if err := f.Err(); err != nil {
						b.Fatal(err)
					}
					heap := heapInuse() - base
					fs := f.Snapshot().Spill
					b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
					b.ReportMetric(float64(heap)/float64(n), "heap-B/URL")
					b.ReportMetric(float64(procmem.PeakRSS())/(1<<20), "peak-RSS-MiB")
					b.ReportMetric(float64(fs.OnDisk)/(1<<20), "disk-MiB")
					b.ReportMetric(float64(n)/el.Seconds(), "URLs/s")
					runtime.KeepAlive(f)
				}
			})
		}
	}
}

// BenchmarkDUEKinds adds N fingerprints, half of them repeats (a third of
// the repeats drawn from 10,000 popular URLs), to the in-memory table and
// to the disk DUE (256K-fingerprint buffer, 64K-entry cache), and reports
// URLs/s, memory bytes per distinct URL and the disk DUE's merge traffic.
func BenchmarkDUEKinds(b *testing.B) {
	for _, kind := range []string{"memory", "disk"} {
		for _, n := range benchSizes(2_000_000) {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				for range b.N {
					var set due.Set
					if kind == "disk" {
						d, err := due.NewDisk(due.DiskConfig{Dir: b.TempDir(), CacheSize: 1 << 16, BufferSize: 1 << 18})
						if err != nil {
							b.Fatal(err)
						}
						set = d
					} else {
						set = due.NewMemory(1024)
					}
					rng := rand.New(rand.NewPCG(1, 2))
					next := 0
					start := time.Now()
					for range n {
						var k int
						switch r := rng.IntN(6); {
						case r < 3 || next == 0:
							k = next
							next++
						case r < 4:
							k = rng.IntN(min(next, 10000))
						default:
							k = rng.IntN(next)
						}
						set.Add(xxhash.Sum64String(benchURL(k)))
					}
					el := time.Since(start)
					b.ReportMetric(float64(n)/el.Seconds(), "URLs/s")
					b.ReportMetric(float64(set.Bytes())/float64(set.Len()), "mem-B/URL")
					if d, ok := set.(*due.Disk); ok {
						st := d.Stats()
						b.ReportMetric(float64(st.CacheHits)/float64(st.CacheAccesses), "cache-hit-rate")
						b.ReportMetric(float64(st.Merges), "merges")
						b.ReportMetric(float64(st.MergeBytes)/float64(n), "merge-B/URL")
					}
					set.Close()
				}
			})
		}
	}
}

// BenchmarkCheckpoint saves the frontier (bfs, spilling under 256 MiB)
// and the DUE of a node holding N queued URLs, as a checkpoint does, and
// reports the time and the size.
func BenchmarkCheckpoint(b *testing.B) {
	for _, kind := range []string{DUEMemory, DUEDisk} {
		for _, n := range benchSizes(1_000_000) {
			b.Run(fmt.Sprintf("due=%s/%d", kind, n), func(b *testing.B) {
				dir := b.TempDir()
				store, err := frontier.Open(filepath.Join(dir, "frontier"))
				if err != nil {
					b.Fatal(err)
				}
				defer store.Close()
				f := newFrontier(OrderBFS, 1)
				f.SpillTo(store, 256<<20)
				var set due.Set = due.NewMemory(n)
				if kind == DUEDisk {
					if set, err = due.NewDisk(due.DiskConfig{Dir: filepath.Join(dir, "due")}); err != nil {
						b.Fatal(err)
					}
				}
				defer set.Close()
				for i := range n {
					u := benchURL(i)
					set.Add(xxhash.Sum64String(u))
					f.Add(u)
				}
				dp := splitterPart(b, splitter.New(splitter.Options{DUE: set}), "due")
				b.ResetTimer()
				var size int64
				for range b.N {
					size = 0
					m, err := checkpoint.Write(dir, checkpoint.Meta{}, []checkpoint.Part{f.Part(nil), dp})
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range m.Parts {
						size += r.Bytes
					}
				}
				b.ReportMetric(float64(size)/(1<<20), "MiB")
				b.ReportMetric(float64(size)/float64(n), "B/URL")
			})
		}
	}
}

// BenchmarkCrawlCheckpoints crawls the local test web (one node, 200 hosts
// x 25 pages, min delay 0) with checkpoints only at the end and every
// 1 s and 250 ms, and reports pages/s.
func BenchmarkCrawlCheckpoints(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := benchWeb(b)
	crawl := func(b *testing.B, every time.Duration) *Result {
		cfg := benchConfig(b, srv)
		cfg.CheckpointEvery = every
		res, err := Run(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	crawl(b, -1) // warm the test web's caches up
	for _, every := range []time.Duration{-1, time.Second, 250 * time.Millisecond} {
		b.Run(fmt.Sprintf("every=%v", every), func(b *testing.B) {
			var pages, ckpts int64
			var elapsed time.Duration
			for range b.N {
				start := time.Now()
				res := crawl(b, every)
				elapsed += time.Since(start)
				pages += res.Stats.FetchAttempts
				ckpts += int64(res.Stats.Checkpoints)
			}
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(ckpts)/float64(b.N), "checkpoints/op")
		})
	}
}
