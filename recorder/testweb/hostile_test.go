package testweb

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHostileCases(t *testing.T) {
	c := DefaultHostileConfig()
	c.HugeBytes, c.BombBytes, c.BombLinks, c.DripEvery = 1<<20, 8<<20, 10, 10*time.Millisecond
	h, err := NewHostile(c)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{DisableCompression: true}}
	get := func(host, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Host = host + "." + HostileDomain
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s%s: %v", host, path, err)
		}
		return resp
	}
	// robots3: three redirects, then the rules.
	path := "/robots.txt"
	for hop := 0; hop < 3; hop++ {
		resp := get("robots3", path)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently {
			t.Fatalf("hop %d: status %d", hop, resp.StatusCode)
		}
		path = resp.Header.Get("Location")
	}
	resp := get("robots3", path)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "Disallow: /secret/") {
		t.Errorf("robots3 rules %q", b)
	}
	// The bomb decodes to BombBytes and then some.
	resp = get("bomb", "/bomb")
	z, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, z)
	resp.Body.Close()
	if err != nil || n < c.BombBytes {
		t.Errorf("bomb decoded to %d bytes (%v)", n, err)
	}
	// The link bomb links BombLinks pages.
	resp = get("links", "/")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := strings.Count(string(b), "<a "); got != c.BombLinks {
		t.Errorf("link bomb has %d links", got)
	}
	// The redirect chain goes on.
	resp = get("redirects", "/r41")
	resp.Body.Close()
	if resp.Header.Get("Location") != "/r42" {
		t.Errorf("redirect chain: %q", resp.Header.Get("Location"))
	}
	if l := h.Log("bomb." + HostileDomain); l.Requests != 1 || l.MaxInFlight != 1 {
		t.Errorf("bomb log %+v", l)
	}
}
