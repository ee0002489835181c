package extract

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const page = "http://example.com/dir/page.html"

func run(t *testing.T, e *Extractor, doc string) ([]string, Stats) {
	t.Helper()
	base, _ := url.Parse(page)
	var got []string
	st, err := e.Extract(strings.NewReader(doc), base, "", func(l Link) { got = append(got, l.Tag+" "+l.URL) })
	if err != nil {
		t.Fatalf("Extract(%q): %v", doc, err)
	}
	return got, st
}

func TestExtract(t *testing.T) {
	const D = "http://example.com/dir/"
	cases := []struct {
		name string
		doc  string
		want []string // "tag url"
	}{
		{"a", `<a href="x.html">x</a>`, []string{"a " + D + "x.html"}},
		{"area", `<map><area href="/m"></map>`, []string{"area http://example.com/m"}},
		{"link", `<link rel=stylesheet href="s.css">`, []string{"link " + D + "s.css"}},
		{"img src", `<img src="i.png">`, []string{"img " + D + "i.png"}},
		{"script", `<script src="/j.js"></script>`, []string{"script http://example.com/j.js"}},
		{"iframe", `<iframe src="f.html"></iframe>`, []string{"iframe " + D + "f.html"}},
		{"frame", `<frameset><frame src="f1"></frameset>`, []string{"frame " + D + "f1"}},
		{"embed", `<embed src="e.swf">`, []string{"embed " + D + "e.swf"}},
		{"source src", `<video><source src="v.mp4"></video>`, []string{"source " + D + "v.mp4"}},
		{"audio", `<audio src="a.mp3"></audio>`, []string{"audio " + D + "a.mp3"}},
		{"video src+poster", `<video src="v.webm" poster="p.jpg"></video>`, []string{"video " + D + "v.webm", "video " + D + "p.jpg"}},
		{"track", `<track src="t.vtt">`, []string{"track " + D + "t.vtt"}},
		{"input src+formaction", `<input type=image src="b.png" formaction="/go">`, []string{"input " + D + "b.png", "input http://example.com/go"}},
		{"form action", `<form action="/search"></form>`, []string{"form http://example.com/search"}},
		{"button formaction", `<button formaction="do">x</button>`, []string{"button " + D + "do"}},
		{"object data", `<object data="o.svg"></object>`, []string{"object " + D + "o.svg"}},
		{"blockquote", `<blockquote cite="http://src.org/q">x</blockquote>`, []string{"blockquote http://src.org/q"}},
		{"q", `<q cite="/c">x</q>`, []string{"q http://example.com/c"}},
		{"del ins", `<del cite="d"></del><ins cite="i"></ins>`, []string{"del " + D + "d", "ins " + D + "i"}},
		{"body background", `<body background="bg.gif">`, []string{"body " + D + "bg.gif"}},
		{"meta refresh", `<meta http-equiv="refresh" content="5; url=/next">`, []string{"meta-refresh http://example.com/next"}},
		{"meta refresh attr order", `<meta content="0;URL='n2'" http-equiv=Refresh>`, []string{"meta-refresh " + D + "n2"}},
		{"img srcset", `<img src="s.jpg" srcset="m.jpg 2x, l.jpg 3x">`, []string{"img " + D + "s.jpg", "img " + D + "m.jpg", "img " + D + "l.jpg"}},
		{"source srcset", `<picture><source srcset="a.webp 100w,b.webp 200w"></picture>`, []string{"source " + D + "a.webp", "source " + D + "b.webp"}},
		// Attributes not in the table are ignored.
		{"ignored attrs", `<a name="x" title="y.html"><img alt="z.png"><div href="d"><span src="s"><p background="b">`, nil},
		{"href on wrong tag", `<img href="x"><script href="y"></script><form src="z">`, nil},
		// Case, entities, whitespace, quoting.
		{"uppercase", `<A HREF="X.html"><IMG SRC='I.PNG'>`, []string{"a " + D + "X.html", "img " + D + "I.PNG"}},
		{"entities", `<a href="p?a=1&amp;b=2&lt;">x</a><a href="&#x2F;abs">y</a>`, []string{"a " + D + "p?a=1&b=2%3C", "a http://example.com/abs"}},
		{"unquoted", `<a href=u.html>u</a>`, []string{"a " + D + "u.html"}},
		{"spaces", "<a href=\"  \n sp.html \t\">", []string{"a " + D + "sp.html"}},
		{"empty href", `<a href="">self</a>`, []string{"a " + page}},
		{"fragment only", `<a href="#top">top</a>`, []string{"a " + page}},
		{"absolute and protocol-relative", `<a href="HTTPS://Other.ORG/A"><a href="//cdn.net/x">`, []string{"a https://other.org/A", "a http://cdn.net/x"}},
		{"duplicates kept", `<a href="x"><a href="x"><img src="x">`, []string{"a " + D + "x", "a " + D + "x", "img " + D + "x"}},
		{"self-closing", `<img src="sc.png"/><link href="l"/>`, []string{"img " + D + "sc.png", "link " + D + "l"}},
		// Skipped values.
		{"skipped schemes", `<a href="javascript:void(0)"><a href="mailto:a@b.c"><img src="data:image/png;base64,AA"><a href="tel:1">`, nil},
		{"malformed", `<a href="http://exa mple.com/"><a href="http://[::1">`, nil},
		// Comments and raw text are not parsed.
		{"comment", `<!-- <a href="c.html"> --><a href="real">`, []string{"a " + D + "real"}},
		{"script text", `<script>document.write('<a href="js.html">')</script><a href="after">`, []string{"a " + D + "after"}},
		{"style text", `<style>a { background: url(<img src="x">) }</style>`, nil},
		{"textarea", `<textarea><a href="t"></textarea><a href="u">`, []string{"a " + D + "u"}},
		// Truncated and malformed HTML.
		{"truncated tag", `<a href="ok"><a href="trunc`, []string{"a " + D + "ok"}},
		{"truncated attr", `<a href="ok"><img src=`, []string{"a " + D + "ok"}},
		{"unclosed quote then more", `<a href='x.html>text</a><a href="y">`, nil}, // EOF inside a tag drops it, as in a browser
		{"garbage", "<<<>>><a href=z><p <", []string{"a " + D + "z"}},
		{"no html", "just text", nil},
		{"empty", "", nil},
		{"duplicate attr first wins", `<a href="one" href="two">`, []string{"a " + D + "one"}},
	}
	e := NewExtractor()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, st := run(t, e, c.doc)
			if !slices.Equal(got, c.want) {
				t.Errorf("Extract(%q)\n got  %q\n want %q", c.doc, got, c.want)
			}
			if st.Links != len(got) {
				t.Errorf("Stats.Links = %d, emitted %d", st.Links, len(got))
			}
		})
	}
}

func TestBase(t *testing.T) {
	e := NewExtractor()
	doc := `<a href="before"><base href="http://other.org/b/"><a href="x"><base href="/ignored/"><img src="../y.png">`
	got, st := run(t, e, doc)
	want := []string{
		"a http://example.com/dir/before",
		"base http://other.org/b/",
		"a http://other.org/b/x",
		"base http://example.com/ignored/", // reported, resolved against the page, not used
		"img http://other.org/y.png",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if st != (Stats{Links: 5, Unique: 5, Encoding: "windows-1252"}) {
		t.Errorf("stats = %+v", st)
	}

	// A base href that does not resolve is skipped and does not take effect.
	got, st = run(t, e, `<base href="javascript:x"><base href="rel/"><a href="z">`)
	want = []string{"base http://example.com/dir/rel/", "a http://example.com/dir/rel/z"}
	if !slices.Equal(got, want) || st.Skipped != 1 {
		t.Errorf("got %q %+v, want %q", got, st, want)
	}
}

func TestSrcset(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a.jpg", []string{"a.jpg"}},
		{"a.jpg 1x", []string{"a.jpg"}},
		{"a.jpg 1x, b.jpg 2x", []string{"a.jpg", "b.jpg"}},
		{"a.jpg 1x,b.jpg 2x", []string{"a.jpg", "b.jpg"}},
		{"a.jpg, b.jpg", []string{"a.jpg", "b.jpg"}},
		{"a.jpg,,, b.jpg", []string{"a.jpg", "b.jpg"}},
		{"  , a.jpg 100w ,  b.jpg  200w , ", []string{"a.jpg", "b.jpg"}},
		{"img,1.jpg 1x, img,2.jpg 2x", []string{"img,1.jpg", "img,2.jpg"}},
		{"a.jpg (x, y) 1x, b.jpg", []string{"a.jpg", "b.jpg"}},
		{"data:image/png;base64,AAA 1x, b.jpg 2x", []string{"data:image/png;base64,AAA", "b.jpg"}},
		{"\ta.jpg\n1x,\nb.jpg", []string{"a.jpg", "b.jpg"}},
		{"", nil},
		{" ,, ", nil},
	}
	for _, c := range cases {
		if got := splitSrcset(nil, []byte(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("splitSrcset(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRefresh(t *testing.T) {
	cases := []struct {
		in         string
		ref        string
		ok, hasURL bool
	}{
		{"5; url=/next", "/next", true, true},
		{"5;url=/next", "/next", true, true},
		{"0; URL=http://x.org/", "http://x.org/", true, true},
		{"0;Url = 'q.html'", "q.html", true, true},
		{`0; url="d q.html" trailing`, "d q.html", true, true},
		{"3, /y", "/y", true, true},
		{"3 /z", "/z", true, true},
		{"  10.5 ; url=a", "a", true, true},
		{".5;url=b", "b", true, true},
		{"0;urlx", "urlx", true, true},
		{"5", "", true, false},
		{"5;", "", true, false},
		{"5 ; ", "", true, false},
		{"", "", false, false},
		{"url=/x", "", false, false},
		{"5x;url=/x", "", false, false},
	}
	for _, c := range cases {
		ref, ok, hasURL := parseRefresh([]byte(c.in))
		if ref != c.ref || ok != c.ok || hasURL != c.hasURL {
			t.Errorf("parseRefresh(%q) = %q, %v, %v; want %q, %v, %v", c.in, ref, ok, hasURL, c.ref, c.ok, c.hasURL)
		}
	}
	// Through Extract: non-refresh metas and refreshes without URL emit
	// nothing; a malformed refresh is skipped.
	e := NewExtractor()
	got, st := run(t, e, `<meta http-equiv="content-type" content="text/html; url=/no"><meta name=x content="url=/no2"><meta http-equiv=refresh content="5"><meta http-equiv=refresh content="bad">`)
	if len(got) != 0 || st != (Stats{Skipped: 1, Encoding: "windows-1252"}) {
		t.Errorf("got %q, %+v", got, st)
	}
}

func TestStats(t *testing.T) {
	e := NewExtractor()
	doc := `<a href="a"><a href="a"><a href="b"><img src="a"><a href="mailto:x@y"><a href="javascript:;">`
	_, st := run(t, e, doc)
	if want := (Stats{Links: 4, Unique: 2, Skipped: 2, Encoding: "windows-1252"}); st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	// Reuse: stats and the unique set start afresh on each page.
	_, st = run(t, e, `<a href="a">`)
	if want := (Stats{Links: 1, Unique: 1, Encoding: "windows-1252"}); st != want {
		t.Errorf("second page stats = %+v, want %+v", st, want)
	}
}

func TestNilBaseAndNilEmit(t *testing.T) {
	e := NewExtractor()
	var got []string
	st, err := e.Extract(strings.NewReader(`<a href="rel"><a href="HTTP://abs.org">`), nil, "", func(l Link) { got = append(got, l.URL) })
	if err != nil || !slices.Equal(got, []string{"http://abs.org/"}) || st.Skipped != 1 {
		t.Errorf("nil base: %q %+v %v", got, st, err)
	}
	base, _ := url.Parse(page)
	st, err = e.Extract(strings.NewReader(`<a href="x">`), base, "", nil)
	if err != nil || st.Links != 1 {
		t.Errorf("nil emit: %+v %v", st, err)
	}
	if _, err := e.Extract(strings.NewReader(""), &url.URL{Scheme: "ftp", Host: "x"}, "", nil); err == nil || !strings.HasPrefix(err.Error(), "extract: page URL: urlnorm: ") {
		t.Errorf("ftp base: %v", err)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		r.n = 0
		return copy(p, `<a href="first">`), nil
	}
	return 0, errors.New("connection reset")
}

func TestReadError(t *testing.T) {
	e := NewExtractor()
	base, _ := url.Parse(page)
	n := 0
	st, err := e.Extract(&failingReader{n: 1}, base, "", func(Link) { n++ })
	if err == nil || err.Error() != "extract: connection reset" || errors.Is(err, io.EOF) {
		t.Errorf("err = %v", err)
	}
	if n != 1 || st.Links != 1 {
		t.Errorf("links before the error: %d, %+v", n, st)
	}
}

// genPage returns an HTML page with about n links of mixed kinds, a third
// of them duplicates, like the paper's mean page (62.55 links).
func genPage(n int) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>Generated page</title>\n")
	b.WriteString(`<link rel="stylesheet" href="/css/site.css"><script src="/js/app.js"></script></head><body>` + "\n")
	for i := 0; i < n-2; i++ {
		k := i
		if i%3 == 2 {
			k = i / 2 // duplicate
		}
		switch i % 6 {
		case 0, 1, 2:
			fmt.Fprintf(&b, "<p>Paragraph %d with some <b>text</b> and a <a href=\"/section%d/page%d.html\">link number %d</a>.</p>\n", i, k%7, k, i)
		case 3:
			fmt.Fprintf(&b, "<div class=\"thumb\"><img src=\"../img/pic%d.jpg\" alt=\"picture %d\" width=100 height=80></div>\n", k, i)
		case 4:
			fmt.Fprintf(&b, "<li><a href=\"http://www%d.example.org/path/to/doc%d?id=%d&amp;lang=en\">external</a></li>\n", k%5, k, k)
		default:
			fmt.Fprintf(&b, "<span>relative <a href=\"item%d.html#frag\">item</a></span>\n", k)
		}
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func TestGenPage(t *testing.T) {
	_, st := run(t, NewExtractor(), genPage(60))
	if st.Links != 60 || st.Skipped != 0 || st.Unique >= st.Links {
		t.Errorf("generated page stats %+v", st)
	}
}

func BenchmarkExtract(b *testing.B) {
	doc := genPage(60)
	base, _ := url.Parse(page)
	e := NewExtractor()
	r := strings.NewReader(doc)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	links := 0
	for b.Loop() {
		r.Reset(doc)
		st, err := e.Extract(r, base, "", func(Link) {})
		if err != nil {
			b.Fatal(err)
		}
		links += st.Links
	}
	b.ReportMetric(float64(links)/b.Elapsed().Seconds(), "links/s")
}

// TestExtractFromKeepsPagePath: a page URL holding characters the URL
// standard keeps in a path ("|", "^") is the base as it is; net/url's
// String would escape them again, resolving the page's relative links
// under another directory.
func TestExtractFromKeepsPagePath(t *testing.T) {
	e := NewExtractor()
	var got []string
	if _, err := e.ExtractFrom(strings.NewReader(`<a href="z"><a href="../w^v">`), "http://a.test/x|y/", "", func(l Link) { got = append(got, l.URL) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"http://a.test/x|y/z", "http://a.test/w^v"}
	if !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
}
