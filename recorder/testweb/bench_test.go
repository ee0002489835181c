package testweb

import (
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
)

// discard is a minimal ResponseWriter that counts body bytes.
type discard struct {
	h http.Header
	n int64
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { d.n += int64(len(b)); return len(b), nil }

// benchURLs returns page URLs spread over the web, as a crawler asks.
func benchURLs(w *Web, n int) []*http.Request {
	reqs := make([]*http.Request, n)
	r := rng{42}
	hosts := w.Hosts()
	for i := range reqs {
		hn := hosts[r.intn(w.numGen)]
		req, _ := http.NewRequest("GET", w.PageURL(hn, r.intn(w.c.PagesPerHost)), nil)
		reqs[i] = req
	}
	return reqs
}

func report(b *testing.B, bytes int64) {
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/s, "pages/s")
	b.ReportMetric(float64(bytes)/s/1e6, "MB/s")
	b.ReportMetric(float64(bytes)/float64(b.N), "B/page")
}

// BenchmarkHandler calls the handler directly from all Ps.
func BenchmarkHandler(b *testing.B) {
	for _, gz := range []bool{false, true} {
		b.Run("gzip="+strconv.FormatBool(gz), func(b *testing.B) {
			c := DefaultConfig()
			c.Hosts, c.PagesPerHost = 1000, 1000
			w, err := New(c)
			if err != nil {
				b.Fatal(err)
			}
			reqs := benchURLs(w, 4096)
			if gz {
				for _, r := range reqs {
					r.Header.Set("Accept-Encoding", "gzip")
				}
			}
			h := w.Handler()
			var total atomic.Int64
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				d := &discard{h: http.Header{}}
				for pb.Next() {
					clear(d.h)
					h.ServeHTTP(d, reqs[next.Add(1)%int64(len(reqs))])
				}
				total.Add(d.n)
			})
			report(b, total.Load())
		})
	}
}

// BenchmarkGenerate measures generating a page's links (the ground truth)
// without rendering.
func BenchmarkGenerate(b *testing.B) {
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost = 1000, 1000
	w, _ := New(c)
	var elems []elem
	var links int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := w.genPage(target{host: int32(i % 1000), kind: kPage, id: int64(i/1000) % 1000}, elems)
		links += int64(len(p.elems))
		elems = p.elems
	}
	b.ReportMetric(float64(links)/b.Elapsed().Seconds(), "links/s")
}

// BenchmarkLoopback fetches pages over 127.0.0.1 with 16 keep-alive
// clients, 64 hosts, with and without gzip. Client and server share the
// CPUs, so the server alone is faster than this.
func BenchmarkLoopback(b *testing.B) {
	for _, gz := range []bool{false, true} {
		b.Run("gzip="+strconv.FormatBool(gz), func(b *testing.B) {
			c := DefaultConfig()
			c.Hosts, c.PagesPerHost = 64, 1000
			s, err := Serve(b.Context(), "127.0.0.1:0", c)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			reqs := benchURLs(s.Web(), 4096)
			urls := make([]string, len(reqs))
			for i, r := range reqs {
				urls[i] = r.URL.String()
			}
			cl := client(s.Addr())
			tr := cl.Transport.(*http.Transport)
			tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.DisableCompression = 0, 64, !gz
			defer cl.CloseIdleConnections()
			var total, next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := cl.Get(urls[next.Add(1)%int64(len(urls))])
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					total.Add(n)
				}
			})
			report(b, total.Load())
		})
	}
}
