package recorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// BenchmarkCrawl crawls a local test web of 200 hosts x 25 pages in one
// process (4 nodes, 64 workers each, MinDelay 0) with the trace on and off,
// and reports pages/s.
func BenchmarkCrawl(b *testing.B) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts, wc.CrawlDelay = 200, 25, 0, 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := crawltest.Serve(b, wc)
	w := srv.Web()
	for _, trace := range []bool{false, true} {
		b.Run(fmt.Sprintf("trace=%v", trace), func(b *testing.B) {
			var pages, urls int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				cfg := DefaultConfig()
				cfg.OutDir = b.TempDir()
				cfg.Seeds = w.Seeds()
				cfg.Resolve = map[string]string{"*": srv.Addr()}
				cfg.AllowPrivate = true
				cfg.MinDelay = 0
				cfg.Nodes = 4
				cfg.NoTrace = !trace
				start := time.Now()
				res, err := Run(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				pages += res.Stats.FetchAttempts
				urls += res.Stats.URLsLogged
			}
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(urls)/elapsed.Seconds(), "urls/s")
			b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
		})
	}
}
