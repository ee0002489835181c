package testweb

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"
)

func TestStatusCodes(t *testing.T) {
	w := newWeb(t, func(c *Config) { c.Hosts, c.PagesPerHost = 20, 200 })
	h := w.Handler()
	counts := map[int]int{}
	relative, cross := 0, 0
	for _, hn := range w.Hosts()[:w.numGen] {
		for id := range w.c.PagesPerHost {
			u := w.PageURL(hn, id)
			code, loc := w.Status(u)
			counts[code]++
			if id == 0 && code != 200 {
				t.Fatalf("%s: home page answers %d", u, code)
			}
			if code != 301 && code != 302 {
				continue
			}
			resp := get(t, h, u)
			if resp.StatusCode != code {
				t.Fatalf("%s: served %d, want %d", u, resp.StatusCode, code)
			}
			raw := resp.Header.Get("Location")
			if !strings.HasPrefix(raw, "http://") {
				relative++
			}
			base, _ := url.Parse(u)
			abs, err := base.Parse(raw)
			if err != nil || abs.String() != loc {
				t.Fatalf("%s: Location %q resolves to %v, Status says %q", u, raw, abs, loc)
			}
			if !strings.HasPrefix(loc, "http://"+hn+"/") {
				cross++
			}
			if c, _ := w.Status(loc); c != 200 {
				t.Fatalf("%s redirects to %s which answers %d", u, loc, c)
			}
		}
	}
	n := float64(w.NumPages())
	t.Logf("status counts %v; %d relative and %d cross-host redirects", counts, relative, cross)
	if r := float64(counts[301]+counts[302]) / n; r < 0.015 || r > 0.05 {
		t.Errorf("redirect fraction %.3f, want about 0.03", r)
	}
	if e := float64(counts[404]+counts[500]+counts[503]) / n; e < 0.015 || e > 0.05 {
		t.Errorf("error fraction %.3f, want about 0.03", e)
	}
	if counts[301] == 0 || counts[302] == 0 || counts[500] == 0 || counts[503] == 0 || relative == 0 || cross == 0 {
		t.Errorf("missing a kind of answer: %v, %d relative, %d cross-host", counts, relative, cross)
	}
	// Errors are served as such, and deterministic per URL.
	for _, hn := range w.Hosts()[:3] {
		for id := range w.c.PagesPerHost {
			u := w.PageURL(hn, id)
			if code, _ := w.Status(u); code >= 400 {
				if got := get(t, h, u).StatusCode; got != code {
					t.Fatalf("%s: served %d, Status says %d", u, got, code)
				}
			}
		}
	}
	for _, u := range []string{"http://h0001.test/p/200.html", "http://h0001.test/p/007.html", "http://h0001.test/nope", "http://h0001.test/img/40.png", "http://trap1.test/robots.txt", "http://trap1.test/cal/2024/13"} {
		if got := get(t, h, u).StatusCode; got != 404 {
			t.Errorf("%s: %d, want 404", u, got)
		}
		if code, _ := w.Status(u); code != 404 {
			t.Errorf("Status(%s) = %d, want 404", u, code)
		}
	}
}

func TestRobots(t *testing.T) {
	w := newWeb(t, func(c *Config) { c.Hosts = 60 })
	h := w.Handler()
	var rules, delays, missing int
	for _, hn := range w.Hosts()[:w.numGen] {
		info, _ := w.HostInfo(hn)
		resp := get(t, h, "http://"+hn+"/robots.txt")
		b := string(body(t, resp))
		if resp.StatusCode == 404 {
			missing++
			if info.Robots {
				t.Fatalf("%s: robots host without robots.txt", hn)
			}
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("%s: robots.txt content type %q", hn, ct)
		}
		private := grobotstxt.AgentAllowed(b, "crawltrace", "http://"+hn+"/private/1.html")
		page := grobotstxt.AgentAllowed(b, "crawltrace", "http://"+hn+"/p/1.html")
		variant := grobotstxt.AgentAllowed(b, "crawltrace", "http://"+hn+"/p/1.html?ref=1&lang=en")
		if !page || private == info.Robots || variant == info.Robots {
			t.Fatalf("%s (robots %v): allowed page %v private %v variant %v\n%s", hn, info.Robots, page, private, variant, b)
		}
		if info.Robots {
			rules++
			if grobotstxt.AgentAllowed(b, "badbot", "http://"+hn+"/") {
				t.Fatalf("%s: badbot allowed", hn)
			}
		}
		if strings.Contains(b, "Crawl-delay: 0.01\n") != (info.CrawlDelay == 0.01) {
			t.Fatalf("%s: crawl delay %v but robots.txt\n%s", hn, info.CrawlDelay, b)
		}
		if info.CrawlDelay >= 0 {
			delays++
		}
	}
	t.Logf("%d hosts with rules, %d with crawl-delay, %d without robots.txt", rules, delays, missing)
	if rules < 8 || rules > 30 || delays == 0 || missing == 0 {
		t.Fatalf("robots: %d with rules, %d with delays, %d missing of 60", rules, delays, missing)
	}
}

func TestTrapsAreInfinite(t *testing.T) {
	w := newWeb(t, nil)
	h := w.Handler()
	follow := func(start, pattern string, steps int) {
		seen := map[string]bool{}
		u := start
		for i := range steps {
			if seen[u] {
				t.Fatalf("step %d: %s seen before", i, u)
			}
			seen[u] = true
			resp := get(t, h, u)
			b := body(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", u, resp.StatusCode)
			}
			next := ""
			for _, l := range extract(t, u, b) {
				if strings.Contains(l.URL, pattern) && !seen[l.URL] && len(l.URL) >= len(u) {
					next = l.URL
				}
			}
			if next == "" {
				t.Fatalf("%s: no way on", u)
			}
			u = next
		}
		t.Logf("after %d steps: a URL of %d bytes", steps, len(u))
	}
	follow("http://trap1.test/cal/2024/01", "/cal/", 300)
	follow("http://trap2.test/a/", "/a/", 300)
	if got := w.Links("http://trap1.test/cal/2024/12"); got[1] != "http://trap1.test/cal/2025/01" {
		t.Fatalf("December links to %v", got)
	}
	// Traps are reachable from generated pages.
	found := false
	for _, hn := range w.Hosts()[:w.numGen] {
		for id := range w.c.PagesPerHost {
			for _, l := range w.Links(w.PageURL(hn, id)) {
				found = found || strings.HasPrefix(l, "http://trap")
			}
		}
	}
	if !found {
		t.Error("no generated page links to a trap host")
	}
}

func TestHostRouting(t *testing.T) {
	w := newWeb(t, nil)
	h := w.Handler()
	want := string(body(t, get(t, h, "http://h0003.test/p/5.html")))
	for _, u := range []string{"http://H0003.TEST/p/5.html", "http://h0003.test:8080/p/5.html", "http://h0003.test./p/5.html"} {
		if got := string(body(t, get(t, h, u))); got != want {
			t.Errorf("%s: different page", u)
		}
	}
	if got := get(t, h, "http://h9999.test/").StatusCode; got != 404 {
		t.Errorf("unknown host: %d", got)
	}
	for _, u := range []string{"http://127.0.0.1:8080/", "http://localhost/", "http://[::1]:80/"} {
		resp := get(t, h, u)
		b := body(t, resp)
		links := extract(t, u, b)
		if resp.StatusCode != 200 || len(links) != len(w.Hosts()) || links[0].URL != "http://h0001.test/" {
			t.Fatalf("%s: root index %d with %d links", u, resp.StatusCode, len(links))
		}
		if got := w.Links(u); len(got) != len(links) {
			t.Fatalf("Links(%s) has %d links, page %d", u, len(got), len(links))
		}
	}
	seeds := string(body(t, get(t, h, "http://127.0.0.1/seeds.txt")))
	if seeds != strings.Join(w.Seeds(), "\n")+"\n" {
		t.Fatalf("seeds.txt:\n%s", seeds)
	}
	if got := get(t, h, "http://127.0.0.1/p/1.html").StatusCode; got != 404 {
		t.Errorf("root path: %d", got)
	}
}

func TestResources(t *testing.T) {
	w := newWeb(t, func(c *Config) { c.GzipFraction = 1 })
	h := w.Handler()
	for _, tc := range []struct{ path, ctype string }{
		{"/img/3.png", "image/png"}, {"/js/1.js", "text/javascript"}, {"/css/0.css", "text/css"},
		{"/", "text/html"}, {"/private/2.html", "text/html"}, {"/search?q=x", "text/html"},
	} {
		u := "http://h0002.test" + tc.path
		resp := get(t, h, u)
		b := body(t, resp)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) || len(b) == 0 {
			t.Errorf("%s: %d %q %d bytes", u, resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
		}
		if tc.ctype != "text/html" && w.Links(u) != nil {
			t.Errorf("%s: resource has links", u)
		}
		gz := get(t, h, u, "Accept-Encoding", "gzip, deflate")
		if gz.Header.Get("Content-Encoding") != "gzip" || string(body(t, gz)) != string(b) {
			t.Errorf("%s: gzip answer differs or is not compressed", u)
		}
	}
	if got := get(t, h, "http://h0002.test/", "Accept-Encoding", "gzip;q=0").Header.Get("Content-Encoding"); got != "" {
		t.Errorf("gzip;q=0 answered with %q", got)
	}
	resp := get(t, h, "http://h0002.test/img/3.png")
	if b := body(t, resp); !strings.HasPrefix(string(b), "\x89PNG") {
		t.Error("image is not a PNG")
	}
}

func TestSite(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs"), 0o755)
	os.WriteFile(filepath.Join(dir, "index.html"), []byte(`<a href="docs/">docs</a>`), 0o644)
	os.WriteFile(filepath.Join(dir, "docs", "index.html"), []byte(`<a href="../">up</a>`), 0o644)
	w := newWeb(t, func(c *Config) { c.Sites = map[string]string{"Example.ORG": dir} })
	h := w.Handler()
	if got := w.Hosts()[len(w.Hosts())-1]; got != "example.org" {
		t.Fatalf("last host %q", got)
	}
	if got := string(body(t, get(t, h, "http://example.org/"))); got != `<a href="docs/">docs</a>` {
		t.Fatalf("site root: %q", got)
	}
	if got := string(body(t, get(t, h, "http://example.org/docs/"))); got != `<a href="../">up</a>` {
		t.Fatalf("site dir: %q", got)
	}
	if got := get(t, h, "http://example.org/missing.html").StatusCode; got != 404 {
		t.Fatalf("missing file: %d", got)
	}
	if _, err := New(Config{Hosts: 1, PagesPerHost: 1, Sites: map[string]string{"x.test": filepath.Join(dir, "nope")}}); err == nil || !strings.Contains(err.Error(), "x.test") {
		t.Fatalf("missing directory: %v", err)
	}
}
