package recorder

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// gzipBomb is n zero bytes after an HTML prefix, gzipped.
func gzipBomb(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	io.WriteString(w, "<html><body><a href=/after-bomb>x</a>")
	zero := make([]byte, 1<<20)
	for i := 0; i < n; i += len(zero) {
		w.Write(zero)
	}
	w.Close()
	return b.Bytes()
}

// TestBodies: a non-HTML body is not read past its headers; gzip,
// deflate (zlib or raw) and br bodies are decoded, unrequested or not;
// an unknown coding is an encoding error and reaches no extractor; a
// gzip bomb is cut at MaxBodyBytes.
func TestBodies(t *testing.T) {
	var written atomic.Int64
	html := func(link string) string { return `<html><body><a href="` + link + `">x</a></body></html>` }
	bomb := gzipBomb(t, 64<<20)
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		coded := func(coding, ct string, body []byte) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Encoding", coding)
			w.Write(body)
		}
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			linkPage("/big.bin", "/small.pdf", "/br", "/zlib", "/deflate", "/gzip", "/unknown", "/bomb")(w, r)
		case "/big.bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			chunk := make([]byte, 64<<10)
			for range 1024 { // 64 MiB
				n, err := w.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		case "/small.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.4 <a href=/from-pdf>"))
		case "/br":
			coded("br", "text/html", crawltest.Encode(t, "br", html("/from-br")))
		case "/zlib":
			coded("deflate", "text/html", crawltest.Encode(t, "zlib", html("/from-zlib")))
		case "/deflate":
			coded("deflate", "text/html", crawltest.Encode(t, "deflate", html("/from-deflate")))
		case "/gzip":
			coded("gzip", "text/html", crawltest.Encode(t, "gzip", html("/from-gzip")))
		case "/unknown":
			coded("x-squash", "text/html", []byte(html("/from-unknown")))
		case "/bomb":
			coded("gzip", "text/html", bomb)
		default:
			linkPage()(w, r)
		}
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.MaxBodyBytes = 1 << 20
	res := runCrawl(t, cfg)
	got := v.got()
	for _, want := range []string{"a.test/from-br", "a.test/from-zlib", "a.test/from-deflate", "a.test/from-gzip", "a.test/after-bomb"} {
		if !slices.Contains(got, want) {
			t.Errorf("not fetched: %s", want)
		}
	}
	for _, bad := range []string{"a.test/from-unknown", "a.test/from-pdf"} {
		if slices.Contains(got, bad) {
			t.Errorf("fetched: %s", bad)
		}
	}
	// The 64 MiB body was abandoned after its headers: what the server
	// managed to write is what the sockets buffered, far below the 16 MiB
	// the crawler used to read.
	if w := written.Load(); w >= 16<<20 {
		t.Errorf("server wrote %d bytes of a skipped body", w)
	}
	if res.Stats.NotHTMLSkipped != 2 || res.Stats.EncodingErrors != 1 || res.Stats.Truncated != 1 {
		t.Errorf("not-HTML skipped %d, encoding errors %d, truncated %d; want 2, 1, 1",
			res.Stats.NotHTMLSkipped, res.Stats.EncodingErrors, res.Stats.Truncated)
	}
	for _, p := range readPages(t, cfg.OutDir, 0) {
		switch {
		case strings.HasSuffix(p.URL, "/big.bin"):
			if p.Bytes != 0 || p.Status != 200 || p.ContentType != "application/octet-stream" {
				t.Errorf("big.bin page row %+v", p)
			}
		case strings.HasSuffix(p.URL, "/unknown"):
			if !strings.Contains(p.Error, `unsupported coding "x-squash"`) {
				t.Errorf("unknown coding page row error %q", p.Error)
			}
		case strings.HasSuffix(p.URL, "/bomb"):
			if !p.Truncated || p.Bytes != 1<<20 {
				t.Errorf("bomb page row: truncated %v, %d bytes", p.Truncated, p.Bytes)
			}
		}
	}
}
