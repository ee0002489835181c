package recorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// benchWeb serves the crawl benchmarks' test web until b ends: 200 hosts
// x 25 pages, no trap hosts, no crawl delay.
func benchWeb(b *testing.B) *testweb.Server {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts, wc.CrawlDelay = 200, 25, 0, 0
	return crawltest.Serve(b, wc)
}

// benchConfig is the default crawl of all of srv's web through it, in a
// fresh directory, with MinDelay 0.
func benchConfig(b *testing.B, srv *testweb.Server) Config {
	cfg := DefaultConfig()
	cfg.OutDir = b.TempDir()
	cfg.Seeds = srv.Web().Seeds()
	cfg.Resolve = map[string]string{"*": srv.Addr()}
	cfg.AllowPrivate = true
	cfg.MinDelay = 0
	return cfg
}

// BenchmarkCrawl crawls a local test web of 200 hosts x 25 pages in one
// process (4 nodes, 64 workers each, MinDelay 0) with the trace on and off,
// and reports pages/s.
func BenchmarkCrawl(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := benchWeb(b)
	for _, trace := range []bool{false, true} {
		b.Run(fmt.Sprintf("trace=%v", trace), func(b *testing.B) {
			var pages, urls int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				cfg := benchConfig(b, srv)
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
