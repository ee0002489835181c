package urlfilter

import (
	"strings"
	"sync"
	"testing"
)

func TestAllow(t *testing.T) {
	scoped := Config{AllowedSuffixes: []string{"example.com", ".Test.ORG.", "*.wild.net", "127.0.0.1"}}
	cases := []struct {
		name   string
		cfg    Config
		url    string
		reason string // "" = allowed
	}{
		{"default ok", DefaultConfig(), "http://anything.org/a/b?c", ""},
		{"https ok", DefaultConfig(), "https://anything.org/", ""},
		{"zero config uses defaults", Config{}, "http://a.org/" + strings.Repeat("x/", 17), "depth"},
		// scheme
		{"ftp", DefaultConfig(), "ftp://a.org/", "scheme"},
		{"mailto", DefaultConfig(), "mailto:a@b.org", "scheme"},
		{"uppercase scheme is not normalized", DefaultConfig(), "HTTP://a.org/", "scheme"},
		{"empty", DefaultConfig(), "", "scheme"},
		// scope
		{"exact suffix", scoped, "http://example.com/", ""},
		{"subdomain", scoped, "http://www.example.com/x", ""},
		{"deep subdomain", scoped, "http://a.b.c.example.com:8080/x", ""},
		{"not a label boundary", scoped, "http://badexample.com/", "scope"},
		{"other host", scoped, "http://example.org/", "scope"},
		{"suffix in path does not count", scoped, "http://evil.org/example.com", "scope"},
		{"suffix in user info does not count", scoped, "http://example.com@evil.org/", "scope"},
		{"suffix normalized", scoped, "http://www.test.org/", ""},
		{"wildcard suffix", scoped, "http://a.wild.net/", ""},
		{"trailing dot host", scoped, "http://example.com./", ""},
		{"host case", scoped, "http://WWW.EXAMPLE.COM/", ""},
		{"ip with port", scoped, "http://127.0.0.1:8080/p", ""},
		{"other ip", scoped, "http://127.0.0.2:8080/p", "scope"},
		{"ipv6", Config{AllowedSuffixes: []string{"[::1]"}}, "http://[::1]:80/", ""},
		{"query only", scoped, "http://example.com?x", ""},
		// length
		{"length at limit", Config{MaxURLLength: 20}, "http://a.org/1234567", ""},
		{"length over limit", Config{MaxURLLength: 20}, "http://a.org/12345678", "length"},
		{"length default", DefaultConfig(), "http://a.org/?" + strings.Repeat("q", 2048), "length"},
		{"length disabled", Config{MaxURLLength: -1}, "http://a.org/?" + strings.Repeat("q", 5000), ""},
		// depth
		{"depth at limit", Config{MaxPathDepth: 3}, "http://a.org/a/b/c", ""},
		{"depth trailing slash", Config{MaxPathDepth: 3}, "http://a.org/a/b/c/", ""},
		{"depth over", Config{MaxPathDepth: 3}, "http://a.org/a/b/c/d", "depth"},
		{"empty segments do not count", Config{MaxPathDepth: 2}, "http://a.org//a///b//", ""},
		{"query slashes do not count", Config{MaxPathDepth: 1}, "http://a.org/a?x=/b/c/d", ""},
		{"depth disabled", Config{MaxPathDepth: -1, MaxRepeatedSegment: -1}, "http://a.org/" + strings.Repeat("a/", 100), ""},
		// repeat
		{"repeat at limit", DefaultConfig(), "http://a.org/x/y/x/y/x/y", ""},
		{"repeat over", DefaultConfig(), "http://a.org/x/y/x/y/x/y/x", "repeat"},
		{"repeat non-adjacent", Config{MaxRepeatedSegment: 1}, "http://a.org/a/b/c/a", "repeat"},
		{"repeat limit 1 ok", Config{MaxRepeatedSegment: 1}, "http://a.org/a/b/c/d", ""},
		{"repeat in query ignored", Config{MaxRepeatedSegment: 1}, "http://a.org/a?/a/a/a", ""},
		{"repeat prefix is different", Config{MaxRepeatedSegment: 1}, "http://a.org/ab/a/abc", ""},
		{"calendar trap", DefaultConfig(), "http://a.org/cal/2024/01/cal/2024/01/cal/2024/01/cal/2024/02", "repeat"},
		// regex
		{"regex match", Config{Regex: `\.html$`}, "http://a.org/p.html", ""},
		{"regex no match", Config{Regex: `\.html$`}, "http://a.org/p.php", "regex"},
		{"regex anywhere", Config{Regex: `/docs/`}, "http://a.org/x/docs/y", ""},
		// order: scheme before anything, scope before depth.
		{"order", Config{AllowedSuffixes: []string{"b.org"}, MaxPathDepth: 1}, "http://a.org/x/y", "scope"},
	}
	for _, c := range cases {
		f, err := New(c.cfg)
		if err != nil {
			t.Fatalf("%s: New: %v", c.name, err)
		}
		ok, reason := f.Allow(c.url)
		if ok != (c.reason == "") || reason != c.reason {
			t.Errorf("%s: Allow(%.60q) = %v, %q; want reason %q", c.name, c.url, ok, reason, c.reason)
		}
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Regex: "("}, `urlfilter: bad regex "(": error parsing regexp`},
		{Config{AllowedSuffixes: []string{"http://example.com/"}}, `urlfilter: bad allowed suffix "http://example.com/"`},
		{Config{AllowedSuffixes: []string{" . "}}, `urlfilter: bad allowed suffix ""`},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("New(%+v) error = %v, want prefix %q", c.cfg, err, c.want)
		}
	}
}

func TestAllowNoAlloc(t *testing.T) {
	f, _ := New(Config{AllowedSuffixes: []string{"example.com"}, Regex: "example"})
	u := "http://www.example.com/a/b/c/a/b?q=1"
	if n := testing.AllocsPerRun(100, func() { f.Allow(u) }); n != 0 {
		t.Errorf("Allow allocates %v times", n)
	}
}

func TestConcurrent(t *testing.T) {
	f, _ := New(Config{AllowedSuffixes: []string{"example.com"}, Regex: "a"})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 500; i++ {
				if ok, _ := f.Allow("http://example.com/a"); !ok {
					t.Error("rejected")
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkAllow(b *testing.B) {
	f, _ := New(Config{AllowedSuffixes: []string{"example.com", "example.org"}})
	urls := []string{
		"http://www.example.com/dir/sub/page.html?id=1",
		"http://other.net/x",
		"https://a.b.example.org/1/2/3/4/5/6/7/8",
		"http://www.example.com/a/b/a/b/a/b/a/b",
	}
	n := 0
	for b.Loop() {
		f.Allow(urls[n&3])
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "URLs/s")
}
