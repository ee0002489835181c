package fetch

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const page = "<html><body><a href=/x>x</a></body></html>"

func testServer(t *testing.T, seen *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(page))
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.4"))
		case "/close":
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(page))
		case "/gzip":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write([]byte(page))
			zw.Close()
		case "/redirect":
			http.Redirect(w, r, "/page", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestGet: what one GET reads and what it reports of its connection: a
// first request dials, the next reuses the connection; a non-HTML page
// body is skipped (but read for a robots.txt); a body past the limit is
// cut and the connection dropped; a server's Connection: close is seen;
// gzip is decoded; a redirect is not followed.
func TestGet(t *testing.T) {
	var seen atomic.Int64
	srv := testServer(t, &seen)
	c := NewClient(ClientConfig{Timeout: 10 * time.Second, AllowPrivate: true})
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	get := func(path string, limit int64, isPage bool) Result {
		t.Helper()
		r := Get(t.Context(), c, "crawltrace-test", srv.URL+path, limit, &buf, isPage)
		if r.Err != nil {
			t.Fatalf("%s: %v", path, r.Err)
		}
		return r
	}
	r := get("/page", 1<<20, true)
	if r.Status != 200 || r.ContentType != "text/html" || buf.String() != page || r.Truncated || r.Skipped {
		t.Errorf("/page: %+v, body %q", r, buf.String())
	}
	if c := r.Conn; !c.GotConn || c.Reused || !c.Dialed || c.Closed || c.Took <= 0 {
		t.Errorf("/page, first request: connection %+v, want dialled, not reused, open", c)
	}
	if c := get("/page", 1<<20, true).Conn; !c.GotConn || !c.Reused || c.Dialed || c.Dial != 0 || c.Closed {
		t.Errorf("/page, second request: connection %+v, want reused, not dialled", c)
	}
	if r := get("/pdf", 1<<20, true); !r.Skipped || buf.Len() != 0 || r.Conn.Closed {
		t.Errorf("/pdf as a page: %+v, body %q; want skipped, its short body drained", r, buf.String())
	}
	if r := get("/pdf", 1<<20, false); r.Skipped || buf.String() != "%PDF-1.4" {
		t.Errorf("/pdf not as a page: %+v, body %q; want read", r, buf.String())
	}
	if r := get("/page", 10, true); !r.Truncated || buf.String() != page[:10] || !r.Conn.Closed {
		t.Errorf("/page cut at 10 bytes: %+v, body %q; want truncated, connection dropped", r, buf.String())
	}
	if r := get("/close", 1<<20, true); !r.Conn.Closed || buf.String() != page {
		t.Errorf("/close: %+v; want the connection closed", r)
	}
	if r := get("/gzip", 1<<20, true); buf.String() != page {
		t.Errorf("/gzip: %+v, body %q; want it decoded", r, buf.String())
	}
	if r := get("/redirect", 1<<20, true); r.Status != http.StatusFound || r.Location != "/page" || !IsRedirect(r.Status) {
		t.Errorf("/redirect: %+v; want 302 to /page, not followed", r)
	}
	if n := seen.Load(); n != 8 {
		t.Errorf("server saw %d requests, want 8", n)
	}
}

// TestClientRefusesPrivate: without AllowPrivate a loopback server is
// never reached, and the error says why.
func TestClientRefusesPrivate(t *testing.T) {
	var seen atomic.Int64
	srv := testServer(t, &seen)
	c := NewClient(ClientConfig{Timeout: 10 * time.Second})
	var buf bytes.Buffer
	r := Get(t.Context(), c, "crawltrace-test", srv.URL+"/page", 1<<20, &buf, true)
	if !errors.Is(r.Err, ErrPrivateAddress) || !strings.Contains(r.Err.Error(), srv.Listener.Addr().String()) {
		t.Errorf("error %v, want ErrPrivateAddress naming %s", r.Err, srv.Listener.Addr())
	}
	if seen.Load() != 0 || r.Conn.GotConn {
		t.Errorf("server saw %d requests, connection %+v", seen.Load(), r.Conn)
	}
}

// TestClientDialAddress: Resolve decides the address dialled for a host
// it maps; DialAddr for the others.
func TestClientDialAddress(t *testing.T) {
	var seen atomic.Int64
	srv := testServer(t, &seen)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var mu sync.Mutex
	var dialled []string
	c := NewClient(ClientConfig{
		Timeout:      10 * time.Second,
		AllowPrivate: true,
		Resolve:      map[string]string{"a.test": "127.0.0.1"},
		DialAddr: func(addr string) string {
			if addr == "b.test:"+port {
				return "127.0.0.1:" + port
			}
			return "a.test:1" // must not be asked for a.test
		},
		DialHook: func(addr string) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
		},
	})
	c.Transport.(*http.Transport).DisableKeepAlives = true
	var buf bytes.Buffer
	for _, host := range []string{"a.test", "b.test"} {
		if r := Get(t.Context(), c, "crawltrace-test", "http://"+host+":"+port+"/page", 1<<20, &buf, true); r.Err != nil || buf.String() != page {
			t.Errorf("%s: %+v", host, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "127.0.0.1:" + port + " 127.0.0.1:" + port; strings.Join(dialled, " ") != want {
		t.Errorf("dialled %v, want %s", dialled, want)
	}
}
