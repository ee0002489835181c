package fetch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
)

// refRequestHead and refResponseHead are the heads as net/http's own
// writer gives them, the reference for requestHead and responseHead.
func refRequestHead(req *http.Request) []byte {
	var b bytes.Buffer
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), host)
	req.Header.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

func refResponseHead(resp *http.Response) []byte {
	var b bytes.Buffer
	status := resp.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	fmt.Fprintf(&b, "%s %s\r\n", resp.Proto, status)
	resp.Header.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// Random headers (line breaks and blanks in values, several values, names
// net/http refuses to write, more fields than the sort's stack array):
// the heads are byte for byte what http.Header.Write gives.
func TestHeadsMatchHeaderWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "B", "x-y", " ", "\t", "\r", "\n", "\r\n", "gzip", ";q=0.5", "é", ":", "\x00", "Z"}
	word := func(n int) string {
		var s string
		for range rng.IntN(n) {
			s += pieces[rng.IntN(len(pieces))]
		}
		return s
	}
	names := []string{"Content-Type", "Content-Length", "Set-Cookie", "X-A", "x-lower", "Bad Name", "Bad:Name", "", "Vary", "Location"}
	for i := range 2000 {
		h := http.Header{}
		for range rng.IntN(40) {
			name := names[rng.IntN(len(names))]
			if rng.IntN(4) == 0 {
				name = fmt.Sprintf("X-F%d", rng.IntN(60))
			}
			h[name] = append(h[name], word(6))
		}
		u, _ := url.Parse(fmt.Sprintf("http://h%d.test/p?q=%d", i, i))
		req := &http.Request{Method: "GET", URL: u, Header: h}
		if i%3 == 0 {
			req.Host = "other.test"
		}
		if got, want := requestHead(req), refRequestHead(req); !bytes.Equal(got, want) {
			t.Fatalf("request head %d:\n%q\nwant\n%q", i, got, want)
		}
		resp := &http.Response{Proto: "HTTP/1.1", StatusCode: 200 + i%400, Header: h}
		if i%2 == 0 {
			resp.Status = fmt.Sprintf("%d Whatever", resp.StatusCode)
		}
		if got, want := responseHead(resp), refResponseHead(resp); !bytes.Equal(got, want) {
			t.Fatalf("response head %d:\n%q\nwant\n%q", i, got, want)
		}
	}
}

// A pinned head.
func TestResponseHeadPinned(t *testing.T) {
	resp := &http.Response{Proto: "HTTP/1.1", StatusCode: 404, Header: http.Header{
		"Content-Type": {"text/html"}, "Set-Cookie": {"a=1", " b=2\r\n"}, "Bad Name": {"x"}}}
	const want = "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n"
	if got := string(responseHead(resp)); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// BenchmarkHeads renders the heads of a typical fetch, by net/http's
// writer (ref) and by requestHead and responseHead (append).
func BenchmarkHeads(b *testing.B) {
	u, _ := url.Parse("http://h1.test/a/page-17.html")
	req := &http.Request{Method: "GET", URL: u, Host: "h1.test", Header: http.Header{
		"User-Agent": {"crawltrace/0.1 (+https://example.org/bot)"}, "Accept": {"text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"},
		"Accept-Encoding": {"gzip, br"}}}
	resp := &http.Response{Proto: "HTTP/1.1", Status: "200 OK", StatusCode: 200, Header: http.Header{
		"Content-Type": {"text/html; charset=utf-8"}, "Content-Length": {"4711"}, "Vary": {"Accept-Encoding"},
		"Content-Encoding": {"gzip"}, "Date": {"Fri, 27 Nov 2026 22:00:00 GMT"}}}
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			refRequestHead(req)
			refResponseHead(resp)
		}
	})
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			requestHead(req)
			responseHead(resp)
		}
	})
}
