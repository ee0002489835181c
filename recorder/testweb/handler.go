package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// connKey is the context key of the per-connection request counter.
type connKey struct{}

type connInfo struct{ requests atomic.Int64 }

// ConnContext is an [http.Server] ConnContext hook that lets the handler
// count requests per connection, which Config.KeepAliveLimits and the
// connection-time part of Config.Latency need. [Serve] installs it.
func (w *Web) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connInfo{})
}

// Handler returns the HTTP handler of the web. It routes on the Host
// header (any port ignored): a generated, trap or site host, or, for an IP
// address or localhost, the root index linking to every host's home page
// (and /seeds.txt, the seed URLs as text). It is safe for concurrent use.
func (w *Web) Handler() http.Handler { return http.HandlerFunc(w.serve) }

var gzipPool = sync.Pool{New: func() any {
	z, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return z
}}

// A 1x1 transparent PNG.
var pngBody = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func (w *Web) serve(rw http.ResponseWriter, req *http.Request) {
	name := hostOnly(req.Host)
	hi, known := w.byName[name]
	var h *host
	if known {
		h = &w.hosts[hi]
	}
	if ci, ok := req.Context().Value(connKey{}).(*connInfo); ok && h != nil {
		n := ci.requests.Add(1)
		if h.maxPerConn > 0 && n >= h.maxPerConn {
			rw.Header().Set("Connection", "close")
		}
		if n == 1 && h.connTime > 0 && !sleep(req.Context(), h.connTime) {
			return
		}
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "testweb: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if h == nil {
		if isRootHost(name) {
			w.serveRoot(rw, req)
			return
		}
		http.Error(rw, "testweb: unknown host", http.StatusNotFound)
		return
	}
	if h.respMean > 0 && !sleep(req.Context(), w.delay(h, req.URL.RequestURI())) {
		return
	}
	if h.kind == siteHost {
		h.site.ServeHTTP(rw, req)
		return
	}
	t, ok := parseTarget(req.URL.EscapedPath(), req.URL.RawQuery, h.kind == trapHost)
	if !ok {
		http.Error(rw, "testweb: not found", http.StatusNotFound)
		return
	}
	t.host = hi
	if t.kind == kRobots && h.kind != genHost {
		http.Error(rw, "testweb: not found", http.StatusNotFound)
		return
	}
	switch code := w.status(t); code {
	case 200:
	case 301, 302:
		rt, form := w.redirect(t.host, t.id)
		var b []byte
		if form == fAbs {
			b = append(b, "http://"...)
			b = append(b, w.hosts[rt.host].name...)
			b = appendPath(b, rt, "&")
		} else if form == fRel {
			b = appendNum(b, "", rt.id, ".html") // from /p/ID.html to /p/N.html
		} else {
			b = appendPath(b, rt, "&")
		}
		rw.Header().Set("Location", string(b))
		rw.WriteHeader(code)
		return
	case 503:
		rw.Header().Set("Retry-After", "1")
		fallthrough
	default:
		http.Error(rw, "testweb: "+http.StatusText(code), code)
		return
	}
	bp, _ := w.bufPool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := (*bp)[:0]
	switch t.kind {
	case kImg:
		b = append(b, pngBody...)
	case kJS:
		b = appendNum(b, "/* testweb script */\nvar testweb = ", t.id, ";\n")
	case kCSS:
		b = appendNum(b, "body { margin: 0; font-family: serif; }\n/* ", t.id, " */\n")
	case kRobots:
		b = append(b, w.robotsTxt(h)...)
	default:
		ep, _ := w.elemPool.Get().(*[]elem)
		if ep == nil {
			ep = new([]elem)
		}
		pg := w.genPage(t, *ep)
		b = w.appendHTML(b, &pg)
		*ep = pg.elems[:0]
		w.elemPool.Put(ep)
	}
	w.write(rw, req, h.gzip, contentType(t.kind), b)
	if cap(b) <= 1<<20 {
		*bp = b
		w.bufPool.Put(bp)
	}
}

// write sends body, gzip-compressed when allowed and asked for.
func (w *Web) write(rw http.ResponseWriter, req *http.Request, gz bool, ctype string, body []byte) {
	hd := rw.Header()
	hd.Set("Content-Type", ctype)
	if gz {
		hd.Set("Vary", "Accept-Encoding")
	}
	if gz && acceptsGzip(req.Header.Get("Accept-Encoding")) && len(body) > 0 {
		var zb bytes.Buffer
		zb.Grow(len(body)/3 + 64)
		z := gzipPool.Get().(*gzip.Writer)
		z.Reset(&zb)
		z.Write(body)
		z.Close()
		gzipPool.Put(z)
		body = zb.Bytes()
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		rw.Write(body)
	}
}

func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") || strings.TrimSpace(enc) == "*" {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// serveRoot answers requests addressed to the server itself.
func (w *Web) serveRoot(rw http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/":
		pg := w.genPage(target{kind: kRoot}, nil)
		w.write(rw, req, false, "text/html; charset=utf-8", w.appendHTML(nil, &pg))
	case "/seeds.txt":
		var b []byte
		for _, s := range w.Seeds() {
			b = append(b, s...)
			b = append(b, '\n')
		}
		w.write(rw, req, false, "text/plain; charset=utf-8", b)
	default:
		http.Error(rw, "testweb: not found", http.StatusNotFound)
	}
}

// delay is the response time of one request: exponential around the host's
// mean, capped at ten times it, and a deterministic function of the URL.
func (w *Web) delay(h *host, uri string) time.Duration {
	x := hash(uint64(w.c.Seed), saltLatency, uint64(h.idx), strhash(uri))
	d := -math.Log(1-unit(x)) * float64(h.respMean)
	return time.Duration(min(d, 10*float64(h.respMean)))
}

// strhash is FNV-1a.
func strhash(s string) uint64 {
	x := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= 1099511628211
	}
	return x
}

// sleep waits for d or until ctx is done; it reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
