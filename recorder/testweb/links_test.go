package testweb

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func newWeb(t testing.TB, mod func(*Config)) *Web {
	t.Helper()
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost = 10, 60
	if mod != nil {
		mod(&c)
	}
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLinksMatchHTML checks the ground truth against what an HTML
// tokenizer finds in the served bytes, over every page of a small web and
// the special pages, and that the pages exercised every feature.
func TestLinksMatchHTML(t *testing.T) {
	w := newWeb(t, nil)
	h := w.Handler()
	var urls []string
	for _, hn := range w.Hosts()[:w.numGen] {
		for id := range w.c.PagesPerHost {
			urls = append(urls, w.PageURL(hn, id))
		}
		urls = append(urls, "http://"+hn+"/private/3.html", "http://"+hn+"/search", "http://"+hn+"/p/7.html?ref=2&lang=en")
	}
	urls = append(urls, "http://trap1.test/", "http://trap1.test/cal/2024/05", "http://trap2.test/a/a/a/", "http://127.0.0.1:8080/")

	features := map[string]int{}
	checked := 0
	for _, u := range urls {
		resp := get(t, h, u, "Accept-Encoding", "gzip")
		b := body(t, resp)
		code, _ := w.Status(u)
		if resp.StatusCode != code {
			t.Fatalf("%s: served %d, Status says %d", u, resp.StatusCode, code)
		}
		want := w.Lookup(u).Links
		if resp.StatusCode != 200 {
			if want != nil {
				t.Errorf("%s: status %d but Links %v", u, resp.StatusCode, want)
			}
			continue
		}
		checked++
		got := extract(t, u, b)
		if !slices.Equal(got, want) {
			for i := range max(len(got), len(want)) {
				var g, x Link
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					x = want[i]
				}
				if g != x {
					t.Fatalf("%s: link %d: extracted %+v, Links says %+v (of %d / %d)", u, i, g, x, len(got), len(want))
				}
			}
		}
		if ls := w.Links(u); len(ls) != len(want) || (len(ls) > 0 && ls[0] != want[0].URL) {
			t.Fatalf("%s: Links and Lookup disagree", u)
		}
		s := string(b)
		for _, f := range []string{"<base href", "srcset=", "http-equiv=\"refresh\"", "href=\"#top\"", "href=\"//", "HTTP://", "=\"../", "href='", "#s", "&amp;", "<area ", "<iframe ", "<form ", "<script ", "<link "} {
			if strings.Contains(s, f) || strings.Contains(strings.ToUpper(s), f) && f == "HTTP://" {
				features[f]++
			}
		}
		if resp.Header.Get("Content-Encoding") == "gzip" {
			features["gzip"]++
		}
		for _, l := range want {
			if strings.Contains(l.URL, "#") || l.URL != strings.ToLower(l.URL[:len("http://h0001.test")])+l.URL[len("http://h0001.test"):] && strings.HasPrefix(l.URL, "http://h") {
				t.Fatalf("%s: link %q not normalized", u, l.URL)
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d pages checked", checked)
	}
	for _, f := range []string{"<base href", "srcset=", "http-equiv=\"refresh\"", "href=\"#top\"", "href=\"//", "=\"../", "href='", "#s", "&amp;", "<area ", "<iframe ", "<form ", "<script ", "<link ", "gzip"} {
		if features[f] == 0 {
			t.Errorf("no page exercised %q", f)
		}
	}
	t.Logf("%d pages checked; features %v", checked, features)
}

func TestDeterminism(t *testing.T) {
	a, b := newWeb(t, nil), newWeb(t, nil)
	c := newWeb(t, func(c *Config) { c.Seed = 2 })
	var diff int
	for _, hn := range a.Hosts()[:3] {
		for id := range 20 {
			u := a.PageURL(hn, id)
			ba := body(t, get(t, a.Handler(), u))
			bb := body(t, get(t, b.Handler(), u))
			if string(ba) != string(bb) {
				t.Fatalf("%s: same seed, different bytes", u)
			}
			if string(ba) != string(body(t, get(t, a.Handler(), u))) {
				t.Fatalf("%s: second request differs", u)
			}
			if string(ba) != string(body(t, get(t, c.Handler(), u))) {
				diff++
			}
		}
	}
	if diff < 55 {
		t.Fatalf("seed 2 changed only %d of 60 pages", diff)
	}
	if fmt.Sprint(a.Quality()) == "" || a.Quality()[a.Seeds()[0]] != b.Quality()[b.Seeds()[0]] {
		t.Fatal("quality not deterministic")
	}
}
