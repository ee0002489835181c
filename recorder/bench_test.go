package recorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/partition"
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

// BenchmarkSplitterLog measures the host splitter alone: partition, append
// to the raw URL log (Arrow builders, batch flushes, segment writes) and the
// DUE lookup, in URLs/s. log=false leaves the URL log out, and
// BenchmarkURLWriterAppend measures the log append alone.
func BenchmarkSplitterLog(b *testing.B) {
	for _, logOn := range []bool{true, false} {
		b.Run(fmt.Sprintf("log=%v", logOn), func(b *testing.B) {
			part, _ := partition.New("host", 4, 0)
			s := &splitter{node: 0, part: part, tr: newTracker(), due: NewDUE(1 << 16),
				front: newFrontier(OrderBFS, 1), out: make([]*Batch, 4), batchSize: 1 << 30, now: time.Now}
			if logOn {
				uw, err := tracefile.CreateURLWriter(b.TempDir(), tracefile.Meta{Nodes: 4, Partitioner: "host"}, tracefile.DefaultWriterConfig())
				if err != nil {
					b.Fatal(err)
				}
				defer uw.Close()
				s.urlw = uw
			}
			msgs := benchMsgs()
			b.ResetTimer()
			n := 0
			for n < b.N {
				m := msgs[n/64%len(msgs)]
				s.process(m)
				n += len(m.urls)
				for _, o := range s.out {
					if o != nil { // reuse the batch: the benchmark sends nothing
						o.URLs, o.Kinds, o.Source = o.URLs[:0], o.Kinds[:0], o.Source[:0]
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "urls/s")
		})
	}
}

func BenchmarkURLWriterAppend(b *testing.B) {
	uw, err := tracefile.CreateURLWriter(b.TempDir(), tracefile.Meta{Nodes: 4, Partitioner: "host"}, tracefile.DefaultWriterConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer uw.Close()
	msgs := benchMsgs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := msgs[i/64%len(msgs)]
		u := m.urls[i%64]
		uw.Append(tracefile.URLRecord{Time: int64(i), URL: u.URL, Kind: u.Kind, Tag: u.Tag, Source: m.source, Worker: m.worker, Dest: 1})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

func benchMsgs() []*splitMsg {
	var msgs []*splitMsg
	for p := 0; p < 64; p++ {
		m := &splitMsg{source: uint64(p + 1), worker: 3}
		for l := 0; l < 64; l++ {
			m.urls = append(m.urls, splitURL{URL: fmt.Sprintf("http://h%04d.test/p/%d.html", (p*7+l)%500, l*13+p), Tag: "a", Kind: tracefile.URLLink})
		}
		msgs = append(msgs, m)
	}
	return msgs
}
