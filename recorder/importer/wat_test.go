package importer

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated fixtures in testdata/")

type obj = map[string]any

// watJSON is a WAT metadata record describing a record of type typ for uri.
func watJSON(typ, uri string, http obj) string {
	env := obj{
		"Format":               "WARC",
		"WARC-Header-Length":   "500",
		"WARC-Header-Metadata": obj{"WARC-Type": typ, "WARC-Target-URI": uri, "WARC-Date": "2024-05-18T01:58:10Z"},
		"Payload-Metadata":     obj{"Actual-Content-Type": "application/http; msgtype=" + typ},
	}
	if http != nil {
		env["Payload-Metadata"].(obj)["HTTP-Response-Metadata"] = http
	}
	b, err := json.Marshal(obj{"Container": obj{"Filename": "x.warc.gz"}, "Envelope": env})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func watMeta(uri, js string) wrec {
	return wrec{typ: "metadata", uri: uri, ctype: "application/json", block: js}
}

// watFixture is a small WAT: a page with relative links and a base, a
// redirect, and records that log nothing.
func watFixture() []wrec {
	page := "http://www.example.test/dir/page.html"
	return []wrec{
		{typ: "warcinfo", ctype: "application/warc-fields", block: "software: test\r\n"},
		watMeta(page, watJSON("response", page, obj{
			"Response-Message": obj{"Status": "200", "Version": "HTTP/1.1", "Reason": "OK"},
			"Headers":          obj{"Content-Type": "text/html"},
			"HTML-Metadata": obj{
				"Head": obj{
					"Title":   "page",
					"Base":    "../base/",
					"Link":    []obj{{"path": "LINK@/href", "url": "style.css", "rel": "stylesheet"}},
					"Scripts": []obj{{"path": "SCRIPT@/src", "url": "//cdn.example.test/s.js"}},
				},
				"Links": []obj{
					{"path": "A@/href", "url": "a.html", "text": "A"},
					{"path": "IMG@/src", "url": "/img/i.png"},
					{"path": "A@/href", "url": "mailto:me@example.test"},
					{"path": "STYLE/#text", "href": "bg.png"},
					{"path": "A@/href", "url": "HTTP://Other.Example.TEST:80/x#frag"},
					{"path": "FORM@/action", "url": ""},
				},
			},
		})),
		watMeta(page, watJSON("request", page, nil)),
		watMeta("http://www.example.test/old", watJSON("response", "http://www.example.test/old", obj{
			"Response-Message": obj{"Status": "301"},
			"Headers":          obj{"location": "moved-here"},
		})),
		watMeta("http://www.example.test/broken", `{"Envelope": {"WARC-Header-Metadata": `),
		watMeta("http://www.example.test/gone", watJSON("response", "http://www.example.test/gone", obj{
			"Response-Message": obj{"Status": "404"},
			"HTML-Metadata":    obj{"Links": []obj{{"path": "A@/href", "url": "/not-logged"}}},
		})),
		watMeta("dns:www.example.test", watJSON("response", "dns:www.example.test", nil)),
	}
}

var watFixtureWant = []urlRow{
	{"http://www.example.test/base/", "link", "base"},
	{"http://www.example.test/base/style.css", "link", "link"},
	{"http://cdn.example.test/s.js", "link", "script"},
	{"http://www.example.test/base/a.html", "link", "a"},
	{"http://www.example.test/img/i.png", "link", "img"},
	{"http://www.example.test/base/bg.png", "link", "style"},
	{"http://other.example.test/x", "link", "a"},
	{"http://www.example.test/base/", "link", "form"},
	{"http://www.example.test/moved-here", "redirect", ""},
}

// TestFixtureFiles pins the generated fixtures in testdata/ (used by the
// command tests); go test -update rewrites them.
func TestFixtureFiles(t *testing.T) {
	for name, data := range map[string][]byte{
		"small.wat.gz":  warcFile(watFixture(), true),
		"small.warc.gz": warcFile(warcFixture(), true),
	} {
		p := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s differs from its generator (%v); run go test -update", p, err)
		}
	}
}

func TestWATFixture(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join("testdata", "small.wat.gz")
	st, err := WAT([]string{in}, Options{Out: filepath.Join(dir, "crawl")})
	if err != nil {
		t.Fatal(err)
	}
	// Skipped: warcinfo, the request's metadata, the dns: response.
	if st.Skipped != 3 || st.BadLines != 1 || st.Bad[0].Line != 5 || !strings.Contains(st.Bad[0].Reason, "WAT JSON") {
		t.Errorf("stats %+v", st)
	}
	rows := readTrace(t, filepath.Join(dir, "crawl"))[0]
	if got := rowsOf(rows); !reflect.DeepEqual(got, watFixtureWant) {
		t.Errorf("rows\n%v\nwant\n%v", got, watFixtureWant)
	}
	for i, r := range rows {
		want := uint64(1)
		if i == len(rows)-1 {
			want = 2
		}
		if r.Source != want || r.Time != 1715997490e9 {
			t.Errorf("row %d: source %d time %d", i, r.Source, r.Time)
		}
	}
}

// A WARC importer sees no URLs in a WAT and the reverse: both say so.
func TestWATvsWARC(t *testing.T) {
	dir := t.TempDir()
	if _, err := WARC([]string{filepath.Join("testdata", "small.wat.gz")}, Options{Out: filepath.Join(dir, "a")}); err == nil || !strings.Contains(err.Error(), "no URLs") {
		t.Errorf("WARC of a WAT: %v", err)
	}
	if _, err := WAT([]string{filepath.Join("testdata", "small.warc.gz")}, Options{Out: filepath.Join(dir, "b")}); err == nil || !strings.Contains(err.Error(), "no URLs") {
		t.Errorf("WAT of a WARC: %v", err)
	}
}

func TestWATLinkTag(t *testing.T) {
	for path, want := range map[string]string{"A@/href": "a", "IMG@/src": "img", "STYLE/#text": "style", "link@/href": "link", "": ""} {
		if got := (&watLink{Path: path}).tag(); got != want {
			t.Errorf("%q: %q, want %q", path, got, want)
		}
	}
	for raw, want := range map[string]string{`"x"`: "x", `["a","b"]`: "a", `3`: "", ``: "", `[]`: ""} {
		if got := firstString(json.RawMessage(raw)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}
