package importer

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/extract"
)

// wrec is one WARC record for the fixture generator.
type wrec struct {
	typ, uri, ctype string
	block           string
	header          string // extra raw header lines, each ending in \r\n
	noLength        bool
}

// warcFile renders records as a WARC/1.1 file, each record its own gzip
// member when gz is set (as crawlers write .warc.gz).
func warcFile(recs []wrec, gz bool) []byte {
	var out bytes.Buffer
	for i, r := range recs {
		var b bytes.Buffer
		fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%08d>\r\nWARC-Date: 2024-05-18T01:58:%02dZ\r\n", r.typ, i, i)
		if r.uri != "" {
			fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", r.uri)
		}
		if r.ctype != "" {
			fmt.Fprintf(&b, "Content-Type: %s\r\n", r.ctype)
		}
		b.WriteString(r.header)
		if !r.noLength {
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.block))
		}
		b.WriteString("\r\n" + r.block + "\r\n\r\n")
		if gz {
			zw := gzip.NewWriter(&out)
			zw.Write(b.Bytes())
			zw.Close()
		} else {
			out.Write(b.Bytes())
		}
	}
	return out.Bytes()
}

func gzipString(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

// chunked encodes s with HTTP/1.1 chunked transfer coding, in 7-byte chunks.
func chunked(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		n := min(7, len(s))
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, s[:n])
		s = s[n:]
	}
	return b.String() + "0\r\n\r\n"
}

const httpRec = "application/http; msgtype=response"

const fixturePage = `<!DOCTYPE html><html><head><title>t</title>
<link rel=stylesheet href="style.css">
<script src="s.js"></script></head>
<body><a href="a.html#x">A</a> <img src="/i.png"> <a href="mailto:me@example.test">mail</a>
<!-- <a href="commented.html"> -->
<a href="HTTP://Other.Example.TEST:80/p?q=1">other</a>
</body></html>`

// warcFixture is a small crawl: a redirect, an HTML page (chunked and
// gzip-encoded), and records that log nothing.
func warcFixture() []wrec {
	return []wrec{
		{typ: "warcinfo", ctype: "application/warc-fields", block: "software: test\r\n"},
		{typ: "request", uri: "http://www.example.test/old", ctype: "application/http; msgtype=request", block: "GET /old HTTP/1.1\r\nHost: www.example.test\r\n\r\n"},
		{typ: "response", uri: "http://www.example.test/old", ctype: httpRec,
			block: "HTTP/1.1 302 Found\r\nLocation: /new/#top\r\nContent-Length: 0\r\n\r\n"},
		{typ: "response", uri: "http://www.example.test/new/", ctype: httpRec,
			block: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" + chunked(gzipString(fixturePage))},
		{typ: "metadata", uri: "http://www.example.test/new/", ctype: "application/warc-fields", block: "outlink: http://www.example.test/a.html\r\n"},
		{typ: "response", uri: "dns:www.example.test", ctype: "text/dns", block: "20240518 www.example.test. 60 IN A 127.0.0.1\n"},
		{typ: "response", uri: "http://www.example.test/missing", ctype: httpRec,
			block: "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 30\r\n\r\n<a href=\"/not-logged\">x</a>   "},
		{typ: "response", uri: "http://www.example.test/i.png", ctype: httpRec,
			block: "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n<a href=\"/not-html\">"},
		{typ: "response", uri: "<http://www.example.test/sniff>", ctype: httpRec,
			block: "HTTP/1.0 200 OK\r\n\r\n<!DOCTYPE html><html><body><a href=sniffed>s</a>"},
		{typ: "revisit", uri: "http://www.example.test/new/", ctype: httpRec, block: "HTTP/1.1 200 OK\r\n\r\n"},
		{typ: "response", uri: "http://www.example.test/moved", ctype: httpRec,
			block: "HTTP/1.0 301 Moved Permanently\r\nLocation: https://www.example.test/moved\r\n\r\n"},
		{typ: "response", uri: "http://www.example.test/br", ctype: httpRec,
			block: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: compress\r\n\r\n\x00\x01"},
	}
}

type urlRow struct{ url, kind, tag string }

func rowsOf(recs []tracefile.URLRecord) []urlRow {
	var out []urlRow
	for _, r := range recs {
		out = append(out, urlRow{r.URL, r.Kind, r.Tag})
	}
	return out
}

var warcFixtureWant = []urlRow{
	{"http://www.example.test/new/", "redirect", ""},
	{"http://www.example.test/new/style.css", "link", "link"},
	{"http://www.example.test/new/s.js", "link", "script"},
	{"http://www.example.test/new/a.html", "link", "a"},
	{"http://www.example.test/i.png", "link", "img"},
	{"http://other.example.test/p?q=1", "link", "a"},
	{"http://www.example.test/sniffed", "link", "a"},
	{"https://www.example.test/moved", "redirect", ""},
}

func TestWARCFixture(t *testing.T) {
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		in := filepath.Join(dir, "f.warc")
		if gz {
			in += ".gz"
		}
		os.WriteFile(in, warcFile(warcFixture(), gz), 0o644)
		st, err := WARC([]string{in}, Options{Out: filepath.Join(dir, "crawl")})
		if err != nil {
			t.Fatal(err)
		}
		// Skipped: warcinfo, request, metadata, dns: response, revisit.
		if st.Skipped != 5 || st.BadLines != 1 || st.Bad[0].Line != 12 || !strings.Contains(st.Bad[0].Reason, `"compress"`) {
			t.Errorf("gzip %v: stats %+v", gz, st)
		}
		rows := readTrace(t, filepath.Join(dir, "crawl"))[0]
		if got := rowsOf(rows); !reflect.DeepEqual(got, warcFixtureWant) {
			t.Errorf("gzip %v: rows\n%v\nwant\n%v", gz, got, warcFixtureWant)
		}
		// source: one id per page, in order of first appearance; time: WARC-Date.
		wantSrc := []uint64{1, 2, 2, 2, 2, 2, 3, 4}
		wantSec := []int{2, 3, 3, 3, 3, 3, 8, 10}
		for i, r := range rows {
			if r.Source != wantSrc[i] || r.Worker != 0 || (r.Time/1e9)%60 != int64(wantSec[i]) {
				t.Errorf("row %d: source %d worker %d time %d", i, r.Source, r.Worker, r.Time)
			}
		}
	}
}

// With several nodes, a page's links are logged at the node owning the
// page; dest is the link's own node.
func TestWARCNodes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "f.warc.gz")
	os.WriteFile(in, warcFile(warcFixture(), true), 0o644)
	st, err := WARC([]string{in}, Options{Out: filepath.Join(dir, "crawl"), Nodes: 3, Partitioner: "url"})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := NewSink(Options{Out: filepath.Join(dir, "ref"), Nodes: 3, Partitioner: "url"})
	defer ref.Abort()
	pages := map[uint64]string{1: "http://www.example.test/old", 2: "http://www.example.test/new/", 3: "http://www.example.test/sniff", 4: "http://www.example.test/moved"}
	var n int
	for node, rows := range readTrace(t, filepath.Join(dir, "crawl")) {
		for _, r := range rows {
			n++
			if want := ref.NodeOf(pages[r.Source]); node != want {
				t.Errorf("%s from page %d at node %d, want %d", r.URL, r.Source, node, want)
			}
			if int(r.Dest) != ref.NodeOf(r.URL) {
				t.Errorf("%s: dest %d", r.URL, r.Dest)
			}
		}
	}
	if n != len(warcFixtureWant) || st.Cross == 0 {
		t.Errorf("%d rows, %d cross", n, st.Cross)
	}
}

func TestWARCMalformed(t *testing.T) {
	good := wrec{typ: "response", uri: "http://a.test/", ctype: httpRec, block: "HTTP/1.1 301 Moved\r\nLocation: /b\r\n\r\n"}
	for _, tc := range []struct {
		name     string
		data     []byte
		rows     int64
		badLines []int64
		reason   string
	}{
		{"bad header field", warcFile([]wrec{good, {typ: "response", uri: "http://a.test/x", ctype: httpRec, header: "no colon here\r\n", block: "HTTP/1.1 301 Moved\r\nLocation: /c\r\n\r\n"}, good}, false),
			2, []int64{2}, "not Name: value"},
		{"bad HTTP head", warcFile([]wrec{{typ: "response", uri: "http://a.test/x", ctype: httpRec, block: "garbage\r\n\r\n"}, good}, true),
			1, []int64{1}, "HTTP response"},
		{"bad target URI", warcFile([]wrec{{typ: "response", uri: "http://[x/", ctype: httpRec, block: "HTTP/1.1 301 Moved\r\nLocation: /c\r\n\r\n"}, good}, false),
			1, []int64{1}, "WARC-Target-URI"},
		{"no Content-Length", warcFile([]wrec{good, good, {typ: "response", uri: "http://a.test/", noLength: true, block: "x"}, good}, false),
			2, []int64{3}, "no Content-Length"},
		{"garbage between records", append(append(warcFile([]wrec{good}, false), "junk line\r\n"...), warcFile([]wrec{good}, false)...),
			1, []int64{2}, "expected a WARC/ version line"},
		{"cut short", warcFile([]wrec{good, good}, false)[:len(warcFile([]wrec{good, good}, false))-20],
			1, []int64{2}, "cut short"},
		{"cut gzip", func() []byte { b := warcFile([]wrec{good, good}, true); return b[:len(b)-30] }(),
			1, []int64{2}, "rest of file not read"},
		{"header line too long", warcFile([]wrec{good, {typ: "response", header: "X-Long: " + strings.Repeat("x", maxWARCHeaderLine) + "\r\n", block: ""}, good}, false),
			1, []int64{2}, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.warc")
			os.WriteFile(in, tc.data, 0o644)
			st, err := WARC([]string{in}, Options{Out: filepath.Join(dir, "crawl")})
			if err != nil {
				t.Fatal(err)
			}
			var lines []int64
			for _, b := range st.Bad {
				lines = append(lines, b.Line)
			}
			if st.Rows != tc.rows || !reflect.DeepEqual(lines, tc.badLines) || !strings.Contains(st.Bad[0].Reason, tc.reason) {
				t.Errorf("rows %d bad %v %v", st.Rows, lines, st.Bad)
			}
		})
	}
}

// A body longer than MaxBodyBytes is cut there: links beyond are not seen.
func TestWARCBodyCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 17 MiB")
	}
	body := "<a href=/first>" + strings.Repeat(" ", MaxBodyBytes) + "<a href=/beyond>"
	dir := t.TempDir()
	in := filepath.Join(dir, "big.warc")
	os.WriteFile(in, warcFile([]wrec{{typ: "response", uri: "http://a.test/", ctype: httpRec, block: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body}}, false), 0o644)
	st, err := WARC([]string{in}, Options{Out: filepath.Join(dir, "crawl")})
	if err != nil || st.Rows != 1 {
		t.Fatalf("%+v %v", st, err)
	}
}

// The Common Crawl sample: one page of an.wikipedia.org.
func TestWARCWhirlwind(t *testing.T) {
	st, rows := importSample(t, WARC, "warc", "whirlwind.warc.gz")
	if st.Rows != 253 || st.Skipped != 3 || st.BadLines != 0 {
		t.Fatalf("stats %+v", st)
	}
	tags := map[string]int{}
	for _, r := range rows {
		tags[r.Tag]++
		if r.Kind != tracefile.URLLink || r.Source != 1 {
			t.Errorf("%+v", r)
		}
	}
	// 221 href attributes (207 a, 14 link) plus 30 img, 1 script, 1 form.
	if want := map[string]int{"a": 207, "link": 14, "img": 30, "script": 1, "form": 1}; !reflect.DeepEqual(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
	for i, want := range map[int]string{
		1:   "https://an.wikipedia.org/w/load.php?lang=an&modules=startup&only=scripts&raw=1&skin=vector-2022",
		3:   "https://upload.wikimedia.org/",
		15:  "https://an.wikipedia.org/wiki/Escopete",
		16:  "https://an.wikipedia.org/wiki/Portalada",
		252: rows[252].URL,
	} {
		if rows[i].URL != want {
			t.Errorf("row %d: %s, want %s", i, rows[i].URL, want)
		}
	}
}

// The Heritrix 1.14 WARC/0.18 sample and the warcio example.
func TestWARCRealSamples(t *testing.T) {
	for _, tc := range []struct {
		file          string
		rows, skipped int64
		redirects     int
		first         string
	}{
		{"netarkivet-20081105135926-00000.warc", 157, 46, 1, ""},
		{"example.warc.gz", 1, 5, 0, "http://www.iana.org/domains/example"},
	} {
		st, rows := importSample(t, WARC, "warc", tc.file)
		if st.Rows != tc.rows || st.Skipped != tc.skipped || st.BadLines != 0 {
			t.Errorf("%s: stats %+v", tc.file, st)
		}
		n := 0
		for _, r := range rows {
			if r.Kind == tracefile.URLRedirect {
				n++
			}
		}
		if n != tc.redirects || (tc.first != "" && rows[0].URL != tc.first) {
			t.Errorf("%s: %d redirects, first %s", tc.file, n, rows[0].URL)
		}
	}
}

// Status lines of HTTP/2 recorders ("HTTP/2 301") are read like HTTP/1.1.
func TestWARCHTTP2StatusLine(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "h2.warc")
	os.WriteFile(in, warcFile([]wrec{
		{typ: "response", uri: "https://a.test/", ctype: httpRec, block: "HTTP/2 301\r\nlocation: /b\r\n\r\n"},
		{typ: "response", uri: "https://a.test/b", ctype: httpRec, block: "HTTP/2.0 200\r\ncontent-type: text/html\r\n\r\n<a href=c>"},
	}, false), 0o644)
	st, err := WARC([]string{in}, Options{Out: filepath.Join(dir, "crawl")})
	if err != nil || st.BadLines != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	want := []urlRow{{"https://a.test/b", "redirect", ""}, {"https://a.test/c", "link", "a"}}
	if got := rowsOf(readTrace(t, filepath.Join(dir, "crawl"))[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("%v", got)
	}
}

// FuzzWARC reads arbitrary bytes as a WARC file: no panics, record numbers
// increase, and lengths are never negative.
func FuzzWARC(f *testing.F) {
	plain := warcFile(warcFixture(), false)
	f.Add(plain)
	f.Add(warcFile(warcFixture(), true))
	f.Add(plain[:len(plain)/2])
	f.Add(warcFile(watFixture(), false))
	f.Add([]byte("WARC/1.0\r\nContent-Length: 5\r\n\r\nabc"))
	s, err := NewSink(Options{Out: filepath.Join(f.TempDir(), "crawl")})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Abort()
	src := newSources()
	ex, body := extract.NewExtractor(), newBodyReader()
	f.Fuzz(func(t *testing.T, data []byte) {
		var last int64
		err := withReader(s, "fuzz", bytes.NewReader(data), func(r io.Reader) error {
			return readWARC(s, "fuzz", r, func(rec *warcRecord) error {
				if rec.num <= last || rec.length < 0 {
					t.Fatalf("record %d after %d, length %d", rec.num, last, rec.length)
				}
				last = rec.num
				if rec.get("warc-type") == "metadata" {
					return importWATRecord(s, src, "fuzz", rec)
				}
				return importWARCResponse(s, src, ex, body, "fuzz", rec)
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkWARC imports a gzip WARC of 500 copies of the fixture crawl.
func BenchmarkWARC(b *testing.B) {
	var recs []wrec
	for i := 0; i < 500; i++ {
		recs = append(recs, warcFixture()...)
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "bench.warc.gz")
	data := warcFile(recs, true)
	os.WriteFile(in, data, 0o644)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var rows int64
	for i := 0; i < b.N; i++ {
		st, err := WARC([]string{in}, Options{Out: filepath.Join(dir, strconv.Itoa(i))})
		if err != nil {
			b.Fatal(err)
		}
		rows += st.Rows
	}
	b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "urls/s")
}
