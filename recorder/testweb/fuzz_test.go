package testweb

import (
	"strings"
	"testing"
)

// FuzzParseTarget checks that paths and targets correspond one to one:
// every accepted path is the canonical spelling of its target.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"/", "/p/12.html", "/p/012.html", "/private/0.html", "/img/3.png", "/js/1.js", "/css/0.css",
		"/search", "/robots.txt", "/cal/2024/01", "/cal/0999/12", "/cal/12024/01", "/a/a/", "/a/b/", "/p/1.html?ref=2&lang=en"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, trap bool) {
		path, query, _ := strings.Cut(s, "?")
		tg, ok := parseTarget(path, query, trap)
		if !ok {
			return
		}
		got := string(appendPath(nil, target{kind: tg.kind, id: tg.id}, "&"))
		if got != path {
			t.Fatalf("parseTarget(%q) = %+v, which is written %q", path, tg, got)
		}
		if tg.query != 0 {
			if q := string(appendPath(nil, tg, "&")); q != s {
				t.Fatalf("query variant %q written %q", s, q)
			}
		}
	})
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" for success
	}{
		{"default", func(*Config) {}, ""},
		{"zero shape fields use defaults", func(c *Config) { c.LinksMedian, c.LinksMean, c.MaxLinks, c.PoolSize, c.QualityModel = 0, 0, 0, 0, "" }, ""},
		{"no hosts", func(c *Config) { c.Hosts, c.TrapHosts = 0, 0 }, "no hosts"},
		{"traps only", func(c *Config) { c.Hosts = 0 }, ""},
		{"negative hosts", func(c *Config) { c.Hosts = -1 }, "hosts -1"},
		{"no pages", func(c *Config) { c.PagesPerHost = 0 }, "pages per host 0"},
		{"fraction", func(c *Config) { c.RobotsFraction = 1.5 }, "robots fraction 1.5"},
		{"redirect+error", func(c *Config) { c.RedirectFraction, c.ErrorFraction = 0.6, 0.6 }, "exceeds 1"},
		{"mean below median", func(c *Config) { c.LinksMean = 10 }, "links median"},
		{"quality model", func(c *Config) { c.QualityModel = "hits" }, `quality model "hits"`},
		{"crawl delay", func(c *Config) { c.CrawlDelay = -1 }, "crawl delay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mod(&c)
			_, err := New(c)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "testweb: ")):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
