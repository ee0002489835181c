package testweb

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

// client returns an HTTP client that sends every host to addr, the way a
// crawler maps "*" to the test server.
func client(addr string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			MaxIdleConnsPerHost: 4,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// TestServeLoopback crawls breadth-first over loopback, at most 400
// requests, comparing every page with the ground truth.
func TestServeLoopback(t *testing.T) {
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost = 20, 30
	c.KeepAliveLimits = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Serve(ctx, "127.0.0.1:0", c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, cl := s.Web(), client(s.Addr())
	defer cl.CloseIdleConnections()

	queue := w.Seeds()
	seen := map[string]bool{}
	for _, u := range queue {
		seen[u] = true
	}
	var pages, redirects int
	for i := 0; i < len(queue) && i < 400; i++ {
		u := queue[i]
		resp, err := cl.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b := body(t, resp)
		code, loc := w.Status(u)
		if resp.StatusCode != code {
			t.Fatalf("%s: %d, Status says %d", u, resp.StatusCode, code)
		}
		next := []string{}
		switch {
		case code == 200 && w.Links(u) != nil:
			pages++
			got := extract(t, u, b)
			if !slices.Equal(got, w.Lookup(u).Links) {
				t.Fatalf("%s: served links differ from Links", u)
			}
			for _, l := range got {
				next = append(next, l.URL)
			}
		case code == 301 || code == 302:
			redirects++
			next = append(next, loc)
		}
		for _, n := range next {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	if pages < 100 || redirects == 0 {
		t.Fatalf("crawled %d pages, %d redirects", pages, redirects)
	}
	t.Logf("%d pages, %d redirects, %d URLs discovered", pages, redirects, len(queue))

	// Keep-alive limits: a host allowing one request per connection says
	// "Connection: close" at once; one allowing 100 does not.
	var one, hundred string
	for _, hn := range w.Hosts() {
		info, _ := w.HostInfo(hn)
		switch info.MaxRequestsPerConn {
		case 1:
			one = hn
		case 100:
			hundred = hn
		}
	}
	if one == "" || hundred == "" {
		t.Fatalf("hosts lack the keep-alive mix")
	}
	for _, tc := range []struct {
		host  string
		close bool
	}{{one, true}, {hundred, false}, {hundred, false}} {
		resp, err := cl.Get("http://" + tc.host + "/robots.txt")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Close != tc.close {
			t.Errorf("%s: Connection: close is %v, want %v", tc.host, resp.Close, tc.close)
		}
	}

	cancel()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server did not stop when its context ended")
	}
	if _, err := cl.Get("http://h0001.test/"); err == nil {
		t.Fatal("request succeeded after close")
	}
}

func TestServeErrors(t *testing.T) {
	if _, err := Serve(context.Background(), "127.0.0.1:0", Config{}); err == nil {
		t.Error("empty config accepted")
	}
	s, err := Serve(context.Background(), "127.0.0.1:0", DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Serve(context.Background(), s.Addr(), DefaultConfig()); err == nil {
		t.Error("second listener on the same address accepted")
	}
	if err := s.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("close: %v", err)
	}
}

func TestLatency(t *testing.T) {
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost = 20, 10
	c.Latency, c.LatencyMedian, c.ConnectMedian = true, time.Millisecond, time.Millisecond
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]bool{}
	for _, hn := range w.Hosts()[:20] {
		info, _ := w.HostInfo(hn)
		if info.ResponseTime <= 0 || info.ConnectTime <= 0 || info.ResponseTime > 50*time.Millisecond {
			t.Fatalf("%s: response %v connect %v", hn, info.ResponseTime, info.ConnectTime)
		}
		seen[info.ResponseTime] = true
		h := &w.hosts[w.byName[hn]]
		if d := w.delay(h, "/p/1.html"); d < 0 || d > 10*h.respMean || d != w.delay(h, "/p/1.html") {
			t.Fatalf("%s: delay %v for mean %v", hn, d, h.respMean)
		}
	}
	if len(seen) < 15 {
		t.Fatalf("response times hardly vary: %v", seen)
	}
	if resp := get(t, w.Handler(), "http://h0001.test/"); resp.StatusCode != 200 {
		t.Fatalf("with latency: %d", resp.StatusCode)
	}
	off := newWeb(t, nil)
	if info, _ := off.HostInfo("h0001.test"); info.ResponseTime != 0 {
		t.Fatalf("latency off but response time %v", info.ResponseTime)
	}
}
