package condense

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// benchCrawl writes a raw trace of n URLs (~60 bytes, ~40% distinct, with
// the crawl-like locality of a hot set) over 4 nodes, and the same URLs as
// text, one per line, for the `sort -u` comparison.
func benchCrawl(b *testing.B, dir string, n int) (textPath string) {
	b.Helper()
	rng := rand.New(rand.NewPCG(42, 42))
	distinct := n * 2 / 5
	textPath = filepath.Join(dir, "urls.txt")
	tf, err := os.Create(textPath)
	if err != nil {
		b.Fatal(err)
	}
	tw := bufio.NewWriterSize(tf, 1<<20)
	const nodes = 4
	var ws []*tracefile.URLWriter
	for i := 0; i < nodes; i++ {
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(filepath.Join(dir, "crawl"), i),
			tracefile.Meta{CrawlID: "bench", Node: i, Nodes: nodes}, tracefile.WriterConfig{})
		if err != nil {
			b.Fatal(err)
		}
		ws = append(ws, w)
	}
	next := 0 // new URLs are introduced in order, so exactly `distinct` appear
	for i := 0; i < n; i++ {
		var k int
		if next < distinct && rng.IntN(n-i) < distinct-next {
			k = next
			next++
		} else {
			k = rng.IntN(max(next, 1))
		}
		host := k % 5000
		u := "http://www.host" + strconv.Itoa(host) + ".example.com/section/" + strconv.Itoa(k%97) + "/page-" + strconv.Itoa(k) + ".html"
		tw.WriteString(u)
		tw.WriteByte('\n')
		node := i % nodes
		if _, err := ws[node].Append(tracefile.URLRecord{URL: u, Kind: tracefile.URLLink, Dest: uint16(host % nodes)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.Flush(); err != nil {
		b.Fatal(err)
	}
	tf.Close()
	return textPath
}

// peakHeap samples the Go heap while f runs and returns the peak in use.
func peakHeap(f func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if v := ms.HeapInuse + ms.StackInuse; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// benchBudget is the --memory of the benchmark run (CRAWLTRACE_BENCH_MEMORY
// in MiB overrides it).
var benchBudget int64 = 32 << 20

// BenchmarkCondense10M condenses a generated 10M-URL raw trace and compares
// with `LC_ALL=C sort -u | wc -l` over the same URLs as text. Set
// CRAWLTRACE_BENCH_URLS to change the size.
func BenchmarkCondense10M(b *testing.B) {
	n := 10_000_000
	if s := os.Getenv("CRAWLTRACE_BENCH_URLS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("CRAWLTRACE_BENCH_MEMORY"); s != "" {
		mib, _ := strconv.Atoi(s)
		benchBudget = int64(mib) << 20
	}
	dir := b.TempDir()
	text := benchCrawl(b, dir, n)
	runtime.GC()
	b.ResetTimer()
	var rep *Report
	var peak uint64
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		peak = peakHeap(func() {
			var err error
			rep, err = Run(context.Background(), Config{Input: filepath.Join(dir, "crawl"), Output: out, MemoryBytes: benchBudget, LimitHeap: true})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/secs, "urls/s")
	b.ReportMetric(float64(peak)/float64(rep.Total.DistinctURLs), "peak-bytes/distinct-url")
	b.ReportMetric(float64(rep.Total.DistinctURLs), "distinct")
	start := time.Now()
	cmd := exec.Command("sh", "-c", "LC_ALL=C sort -u "+text+" | wc -l")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	outb, err := cmd.Output()
	if err != nil {
		b.Logf("sort -u not run: %v", err)
		return
	}
	sortSecs := time.Since(start).Seconds()
	sortDistinct, _ := strconv.ParseInt(strings.TrimSpace(string(outb)), 10, 64)
	if sortDistinct != rep.Total.DistinctURLs {
		b.Fatalf("sort -u counts %d distinct URLs, condense %d", sortDistinct, rep.Total.DistinctURLs)
	}
	b.ReportMetric(sortSecs, "sort-u-sec")
	b.ReportMetric(sortSecs/secs, "speedup-vs-sort-u")
}
