package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HostileDomain is the domain of the hostile web's virtual hosts.
const HostileDomain = "hostile.test"

// HostileConfig sizes the hostile web. The zero value is not usable;
// start from [DefaultHostileConfig].
type HostileConfig struct {
	// HugeBytes is the length of the endless-looking HTML page and of the
	// non-HTML bodies. Default 1 GiB: a crawler must cut them.
	HugeBytes int64
	// BombBytes is the decompressed size of the gzip bomb (compressed
	// about 1000 times). Default 256 MiB.
	BombBytes int64
	// BombLinks is the number of distinct links on the link bomb's page.
	// Default 100000.
	BombLinks int
	// DripEvery is the slow-loris server's pause between body bytes.
	// Default 500ms.
	DripEvery time.Duration
}

// DefaultHostileConfig returns the defaults documented on HostileConfig.
func DefaultHostileConfig() HostileConfig {
	return HostileConfig{HugeBytes: 1 << 30, BombBytes: 256 << 20, BombLinks: 100000, DripEvery: 500 * time.Millisecond}
}

// Hostile is a web built to hurt crawlers, one case per virtual host of
// hostile.test:
//
//	robots1, robots3, robots6  /robots.txt redirects 1, 3 or 6 times, then
//	                           disallows /secret/ (six hops exceed RFC
//	                           9309's five: unavailable, so allow all)
//	redirects                  /r0 -> /r1 -> ... never ends
//	huge                       /huge: an HTML page of HugeBytes
//	bomb                       /bomb: a gzip bomb (BombBytes decoded)
//	links                      /: BombLinks distinct links
//	slow                       /drip: headers, then one body byte per
//	                           DripEvery; /stall: no headers at all
//	binary                     /file.bin, /video.mp4 (HugeBytes,
//	                           non-HTML), /doc.pdf (small)
//	encodings                  /br (x-br, unknown), /x (x-squash),
//	                           /corrupt (gzip that is not)
//	traps                      /cal/YYYY/MM (an endless calendar),
//	                           /deep/a/a/a/... and ?sid= session ids
//	busy                       /busy: 429 Too Many Requests with
//	                           Retry-After: 1, every time (a server that
//	                           never stops asking to come back later)
//
// Requested by any other host name (or by IP) it answers with an index
// linking every case. It records, per host, every request's start and end
// and the bytes written to bodies a crawler should not read, so a test can
// check politeness and caps from the server's side. It is safe for
// concurrent use.
type Hostile struct {
	cfg  HostileConfig
	bomb []byte

	mu    sync.Mutex
	hosts map[string]*HostileLog
}

// HostileLog is what the server saw of one host.
type HostileLog struct {
	Requests    int
	Paths       []string
	Starts      []time.Time
	InFlight    int
	MaxInFlight int           // most requests in flight at once
	MinGap      time.Duration // least time between two request starts (0 with fewer than two)
	BodyBytes   int64         // bytes written to huge and non-HTML bodies
}

// NewHostile returns the hostile web c describes.
func NewHostile(c HostileConfig) (*Hostile, error) {
	if c.HugeBytes <= 0 || c.BombBytes <= 0 || c.BombLinks <= 0 || c.DripEvery <= 0 {
		return nil, errors.New("testweb: hostile web sizes must be positive")
	}
	return &Hostile{cfg: c, bomb: gzipZeros(c.BombBytes), hosts: make(map[string]*HostileLog)}, nil
}

// HostileCases lists the case hosts (without the domain).
func HostileCases() []string {
	return []string{"robots1", "robots3", "robots6", "redirects", "huge", "bomb", "links", "slow", "binary", "encodings", "traps", "busy"}
}

// Seeds returns the home page of every case.
func (h *Hostile) Seeds() []string {
	var s []string
	for _, c := range HostileCases() {
		s = append(s, "http://"+c+"."+HostileDomain+"/")
	}
	return s
}

// WriteSeeds writes the seed URLs, one per line.
func (h *Hostile) WriteSeeds(out io.Writer) error { return writeLines(out, h.Seeds()) }

// Log returns a copy of what the server saw of host (a full host name,
// e.g. "links.hostile.test").
func (h *Hostile) Log(host string) HostileLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.hosts[host]
	if l == nil {
		return HostileLog{}
	}
	c := *l
	c.Paths = append([]string(nil), l.Paths...)
	c.Starts = append([]time.Time(nil), l.Starts...)
	return c
}

// Hosts returns the host names that were requested, sorted.
func (h *Hostile) Hosts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.hosts))
	for k := range h.hosts {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (h *Hostile) begin(host, path string) *HostileLog {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.hosts[host]
	if l == nil {
		l = &HostileLog{}
		h.hosts[host] = l
	}
	if n := len(l.Starts); n > 0 {
		if g := now.Sub(l.Starts[n-1]); l.MinGap == 0 || g < l.MinGap {
			l.MinGap = g
		}
	}
	l.Requests++
	l.Paths = append(l.Paths, path)
	l.Starts = append(l.Starts, now)
	l.InFlight++
	l.MaxInFlight = max(l.MaxInFlight, l.InFlight)
	return l
}

func (h *Hostile) end(l *HostileLog, body int64) {
	h.mu.Lock()
	l.InFlight--
	l.BodyBytes += body
	h.mu.Unlock()
}

// ServeHTTP serves the case chosen by the Host header.
func (h *Hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.Host)
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	l := h.begin(host, r.URL.RequestURI())
	var body int64
	defer func() { h.end(l, body) }()
	cs, ok := strings.CutSuffix(host, "."+HostileDomain)
	if !ok {
		h.index(w)
		return
	}
	p := r.URL.Path
	if p == "/robots.txt" {
		h.robots(w, r, cs)
		return
	}
	switch cs {
	case "robots1", "robots3", "robots6":
		hostilePage(w, "/secret/1", "/secret/2", "/open")
	case "redirects":
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "/r"))
		http.Redirect(w, r, "/r"+strconv.Itoa(n+1), http.StatusFound)
	case "huge":
		if p != "/huge" {
			hostilePage(w, "/huge", "/after")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		body = stream(w, r, h.cfg.HugeBytes, []byte("<p>all work and no play "))
	case "bomb":
		if p != "/bomb" {
			hostilePage(w, "/bomb", "/after")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(h.bomb)))
		w.Write(h.bomb)
	case "links":
		if p != "/" {
			hostilePage(w)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		var b bytes.Buffer
		b.WriteString("<html><body>")
		for i := range h.cfg.BombLinks {
			fmt.Fprintf(&b, `<a href="/l/%d">%d</a>`, i, i)
		}
		b.WriteString("</body></html>")
		w.Write(b.Bytes())
	case "slow":
		switch p {
		case "/drip":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := w.Write([]byte("<")); err != nil {
					return
				}
				body++
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(h.cfg.DripEvery):
				}
			}
		case "/stall":
			<-r.Context().Done()
		default:
			hostilePage(w, "/drip", "/stall", "/after")
		}
	case "binary":
		switch p {
		case "/file.bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			body = stream(w, r, h.cfg.HugeBytes, []byte{0, 1, 2, 3, 4, 5, 6, 7})
		case "/video.mp4":
			w.Header().Set("Content-Type", "video/mp4")
			w.Header().Set("Content-Length", strconv.FormatInt(h.cfg.HugeBytes, 10))
			body = stream(w, r, h.cfg.HugeBytes, []byte("ftypisom"))
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte(`%PDF-1.4 <a href="/from-pdf">`))
		default:
			hostilePage(w, "/file.bin", "/video.mp4", "/doc.pdf")
		}
	case "encodings":
		switch p {
		case "/br":
			encodedPage(w, "x-br", `<a href="/from-unknown">`)
		case "/x":
			encodedPage(w, "x-squash", `<a href="/from-unknown">`)
		case "/corrupt":
			encodedPage(w, "gzip", `<a href="/from-corrupt">this is not gzip</a>`)
		default:
			hostilePage(w, "/br", "/x", "/corrupt")
		}
	case "traps":
		switch {
		case strings.HasPrefix(p, "/cal/"):
			var y, m int
			fmt.Sscanf(p, "/cal/%d/%d", &y, &m)
			if m++; m > 12 {
				y, m = y+1, 1
			}
			hostilePage(w, fmt.Sprintf("/cal/%04d/%02d", y, m))
		case strings.HasPrefix(p, "/deep/"):
			hostilePage(w, p+"a/", fmt.Sprintf("?sid=%d", time.Now().UnixNano()))
		default:
			hostilePage(w, "/cal/2024/01", "/deep/a/", fmt.Sprintf("/?sid=%d", time.Now().UnixNano()))
		}
	case "busy":
		if p != "/busy" {
			hostilePage(w, "/busy", "/after")
			return
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	default:
		http.NotFound(w, r)
	}
}

// robots answers /robots.txt: robotsN redirect N times, then disallow
// /secret/; the other cases allow everything.
func (h *Hostile) robots(w http.ResponseWriter, r *http.Request, cs string) {
	hops, err := strconv.Atoi(strings.TrimPrefix(cs, "robots"))
	if err != nil || !strings.HasPrefix(cs, "robots") {
		w.Write([]byte("User-agent: *\nAllow: /\n"))
		return
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("hop"))
	if n < hops {
		http.Redirect(w, r, "/robots.txt?hop="+strconv.Itoa(n+1), http.StatusMovedPermanently)
		return
	}
	w.Write([]byte("User-agent: *\nDisallow: /secret/\n"))
}

func (h *Hostile) index(w http.ResponseWriter) {
	hostilePage(w, h.Seeds()...)
}

// hostilePage writes a small HTML page linking links.
func hostilePage(w http.ResponseWriter, links ...string) {
	w.Header().Set("Content-Type", "text/html")
	var b strings.Builder
	b.WriteString("<html><body>")
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	b.WriteString("</body></html>")
	w.Write([]byte(b.String()))
}

// encodedPage writes body as HTML that claims the Content-Encoding enc.
func encodedPage(w http.ResponseWriter, enc, body string) {
	w.Header().Set("Content-Type", "text/html")
	w.Header().Set("Content-Encoding", enc)
	w.Write([]byte(body))
}

// stream writes n bytes of pattern, stopping when the client goes; it
// returns the bytes written.
func stream(w http.ResponseWriter, r *http.Request, n int64, pattern []byte) int64 {
	chunk := bytes.Repeat(pattern, 32<<10/len(pattern))
	var done int64
	for done < n && r.Context().Err() == nil {
		c := chunk[:min(int64(len(chunk)), n-done)]
		k, err := w.Write(c)
		done += int64(k)
		if err != nil {
			break
		}
	}
	return done
}

// gzipZeros is an HTML prefix followed by n zero bytes (rounded up to
// MiB), gzipped as concatenated gzip members (RFC 1952 2.2), which a
// decoder reads as one stream: the compressed MiB of zeros is made once
// and repeated, so building a large bomb is cheap.
func gzipZeros(n int64) []byte {
	member := func(p []byte) []byte {
		var b bytes.Buffer
		z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		z.Write(p)
		z.Close()
		return b.Bytes()
	}
	out := member([]byte(`<html><body><a href="/after-bomb">x</a>`))
	zeros := member(make([]byte, 1<<20))
	for i := int64(0); i < n; i += 1 << 20 {
		out = append(out, zeros...)
	}
	return out
}

// HostileServer is a running hostile web. It is safe for concurrent use.
type HostileServer struct {
	*httpServer
	Web *Hostile
}

// ServeHostile serves w on addr (e.g. "127.0.0.1:0") until ctx is done or
// Close is called.
func ServeHostile(ctx context.Context, addr string, w *Hostile) (*HostileServer, error) {
	hs, err := serveHTTP(ctx, addr, &http.Server{Handler: w, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second})
	if err != nil {
		return nil, err
	}
	return &HostileServer{httpServer: hs, Web: w}, nil
}
