package importer

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/sampledata"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// sharedData is a real sample file (not in the repo): skipped when missing,
// failed in CI.
func sharedData(t *testing.T, parts ...string) string {
	t.Helper()
	return sampledata.Path(t, parts...)
}

// importSample imports one file of the shared samples (dir/file) with imp
// into a fresh one-node crawl directory; it returns the stats and the rows.
func importSample(t *testing.T, imp func([]string, Options) (*Stats, error), dir, file string) (*Stats, []tracefile.URLRecord) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "crawl")
	st, err := imp([]string{sharedData(t, dir, file)}, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	return st, readTrace(t, out)[0]
}

// readTrace returns every node's rows of a raw trace directory.
func readTrace(t *testing.T, dir string) [][]tracefile.URLRecord {
	t.Helper()
	m, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]tracefile.URLRecord, m.Nodes)
	for n := range out {
		out[n] = crawltest.NodeURLRows(t, dir, n)
	}
	return out
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Lines taken verbatim from the real logs, every field checked.
func TestParseHeritrixLineRealLines(t *testing.T) {
	for _, tc := range []struct {
		file, line string
		want       HeritrixEntry
		kind, tag  string
	}{
		{ // Heritrix 3: prerequisite robots.txt
			"h3-crawl.log",
			"2015-05-22T15:01:10.521Z   200        564 http://www.raeder.dk/robots.txt P http://www.raeder.dk/ text/plain #084 20150522150109851+648 sha1:OKIDEBO3TNPIQLIED2HVPC4ICFJPBP5N - content-size:845",
			HeritrixEntry{
				Time: ts("2015-05-22T15:01:10.521Z"), Status: 200, Size: 564,
				URI: "http://www.raeder.dk/robots.txt", HopPath: "P", Via: "http://www.raeder.dk/",
				MIME: "text/plain", Thread: 84,
				FetchStart: ts("2015-05-22T15:01:09.851Z"), FetchDuration: 648 * time.Millisecond,
				Digest: "sha1:OKIDEBO3TNPIQLIED2HVPC4ICFJPBP5N", Annotations: "content-size:845",
			},
			"link", "prereq",
		},
		{ // Heritrix 3: a seed that failed (-2: connection lost), no fetch time
			"h3-crawl.log",
			"2015-05-22T15:01:50.448Z    -2          0 http://kb-prod-udv-001.kb.dk/netarchivesuite/clock.php - - unknown #099 - - - 3t",
			HeritrixEntry{
				Time: ts("2015-05-22T15:01:50.448Z"), Status: -2, Size: 0,
				URI:  "http://kb-prod-udv-001.kb.dk/netarchivesuite/clock.php",
				MIME: "unknown", Thread: 99, Annotations: "3t",
			},
			"seed", "",
		},
		{ // Heritrix 3: redirect after two embeds
			"h3-crawl.log",
			"2015-05-22T15:01:20.768Z   200      16268 http://gmpg.org/xfn/intro.php EER http://gmpg.org/xfn/intro text/html #094 20150522150120179+580 sha1:EW3O3DN2TG5JZK6DRZSXGKJSJM2LX3TF - usingCharsetInHTML:UTF-8,content-size:16410",
			HeritrixEntry{
				Time: ts("2015-05-22T15:01:20.768Z"), Status: 200, Size: 16268,
				URI: "http://gmpg.org/xfn/intro.php", HopPath: "EER", Via: "http://gmpg.org/xfn/intro",
				MIME: "text/html", Thread: 94,
				FetchStart: ts("2015-05-22T15:01:20.179Z"), FetchDuration: 580 * time.Millisecond,
				Digest: "sha1:EW3O3DN2TG5JZK6DRZSXGKJSJM2LX3TF", Annotations: "usingCharsetInHTML:UTF-8,content-size:16410",
			},
			"redirect", "",
		},
		{ // Heritrix 1: embed, bare base32 digest
			"oldjob5_1140687204304-crawl.log",
			"2006-02-23T10:33:29.555Z   200         62 http://www.pligtaflevering.dk/space.gif E http://www.pligtaflevering.dk/ image/gif #003 20060223093329524+17 YILRRN4IR2WOV2TIO52VY6ASQZYLT7Y7 - -",
			HeritrixEntry{
				Time: ts("2006-02-23T10:33:29.555Z"), Status: 200, Size: 62,
				URI: "http://www.pligtaflevering.dk/space.gif", HopPath: "E", Via: "http://www.pligtaflevering.dk/",
				MIME: "image/gif", Thread: 3,
				FetchStart: ts("2006-02-23T09:33:29.524Z"), FetchDuration: 17 * time.Millisecond,
				Digest: "YILRRN4IR2WOV2TIO52VY6ASQZYLT7Y7",
			},
			"link", "embed",
		},
		{ // Heritrix 1: blocked by a quota (-5003), size "-"
			"oldjob5_1140687204304-crawl.log",
			"2006-02-23T10:33:32.466Z -5003          - http://www.drive-badmintonklub.dk/om/hold.html LL http://www.drive-badmintonklub.dk/medlemsinfo/ no-type #001 - - - Q:group-max-all-kb",
			HeritrixEntry{
				Time: ts("2006-02-23T10:33:32.466Z"), Status: -5003, Size: -1,
				URI: "http://www.drive-badmintonklub.dk/om/hold.html", HopPath: "LL", Via: "http://www.drive-badmintonklub.dk/medlemsinfo/",
				MIME: "no-type", Thread: 1, Annotations: "Q:group-max-all-kb",
			},
			"link", "a",
		},
		{ // Heritrix 1.12-era log (crawl-9): a seed answered with a redirect
			"crawl-9.log",
			"2007-12-27T12:51:29.338Z   302        319 http://www.netarkivet.dk/website/sources/index-da.php - - text/html #006 20071227125129307+17 sha1:KSX4LQZ3ZGIELDEMBONG6GCTP2DG3YRX - content-size:557,3t",
			HeritrixEntry{
				Time: ts("2007-12-27T12:51:29.338Z"), Status: 302, Size: 319,
				URI:  "http://www.netarkivet.dk/website/sources/index-da.php",
				MIME: "text/html", Thread: 6,
				FetchStart: ts("2007-12-27T12:51:29.307Z"), FetchDuration: 17 * time.Millisecond,
				Digest: "sha1:KSX4LQZ3ZGIELDEMBONG6GCTP2DG3YRX", Annotations: "content-size:557,3t",
			},
			"seed", "",
		},
	} {
		got, err := ParseHeritrixLine(tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
		if got.Kind() != tc.kind || got.Tag() != tc.tag {
			t.Errorf("%s: kind %q tag %q, want %q %q", tc.line, got.Kind(), got.Tag(), tc.kind, tc.tag)
		}
		// The line really is in the sample, when the sample is here.
		p, ok := sampledata.Optional(t, "heritrix", tc.file)
		if b, err := os.ReadFile(p); ok && err == nil && !bytes.Contains(b, []byte(tc.line+"\n")) {
			t.Errorf("line not found in %s: %s", p, tc.line)
		}
	}
}

func TestParseHeritrixLineExtraAndErrors(t *testing.T) {
	e, err := ParseHeritrixLine(`2015-05-22T15:01:11.559Z 200 837 http://www.example.dk/ - - text/html #002 20150522150111471+68 sha1:X seeds.txt content-size:1117,3t {"warcFilename":"x.warc.gz", "offset":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if e.SourceTag != "seeds.txt" || e.Extra != `{"warcFilename":"x.warc.gz", "offset":1}` {
		t.Errorf("source tag %q extra %q", e.SourceTag, e.Extra)
	}
	// Only the first six fields are required.
	if e, err := ParseHeritrixLine("2015-05-22T15:01:11Z 200 1 http://a.test/ L http://b.test/"); err != nil || e.Thread != -1 || e.Tag() != "a" {
		t.Errorf("six fields: %+v %v", e, err)
	}
	for _, tc := range []struct{ line, want string }{
		{"header line", "not a log timestamp"},
		{"2015-05-22T15:01:11.559Z 200 837", "3 fields"},
		{"2015-05-22T15:01:11.559Z x 837 http://a/ L http://b/", "status"},
		{"2015-05-22T15:01:11.559Z 200 -3 http://a/ L http://b/", "size"},
		{"2015-05-22T15:01:11.559Z 200 3 http://a/ L1 http://b/", "hop path"},
		{"2015-05-22T15:01:11.559Z 200 3 http://a/ L http://b/ text/html 7", "thread"},
		{"2015-05-22T15:01:11.559Z 200 3 http://a/ L http://b/ text/html #99999", "thread"},
		{"2015-05-22T15:01:11.559Z 200 3 http://a/ L http://b/ text/html #1 2015+3", "fetch time"},
	} {
		if _, err := ParseHeritrixLine(tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.line, err, tc.want)
		}
	}
}

func TestHeritrixFixture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "crawl")
	in := filepath.Join("testdata", "crawl.log")
	st, err := Heritrix([]string{in}, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	// Skipped: the header line, the dns: line and the ftp: line.
	if st.Rows != 9 || st.Skipped != 3 || st.BadLines != 5 {
		t.Fatalf("stats %+v", st)
	}
	var lines []int64
	for _, b := range st.Bad {
		if b.File != in {
			t.Errorf("bad line file %q", b.File)
		}
		lines = append(lines, b.Line)
	}
	if !reflect.DeepEqual(lines, []int64{11, 12, 13, 16, 18}) {
		t.Errorf("bad lines %v", lines)
	}
	type row struct {
		time           string
		url, kind, tag string
		source, worker uint64
	}
	want := []row{
		{"2015-05-22T15:01:10.521Z", "http://www.example.dk/robots.txt", "link", "prereq", 1, 84},
		{"2015-05-22T15:01:11.559Z", "http://www.example.dk/", "seed", "", 0, 2},
		{"2015-05-22T15:01:12Z", "http://www.example.dk/a.html", "link", "a", 1, 7},
		{"2015-05-22T15:01:12.1Z", "http://www.example.dk/space.gif", "link", "embed", 2, 3},
		{"2015-05-22T15:01:12.2Z", "http://static.example.org/x.js", "link", "js", 2, 10},
		{"2015-05-22T15:01:12.3Z", "http://www.example.dk/b/", "redirect", "", 3, 11},
		{"2015-05-22T15:01:12.4Z", "http://www.example.dk/favicon.ico", "link", "inferred", 4, 12},
		{"2015-05-22T15:01:12.5Z", "http://www.xn--bger-gra.dk/", "link", "a", 1, 13},
		{"2006-02-23T10:33:32.466Z", "http://www.example.dk/d.html", "link", "a", 2, 1},
	}
	rows := readTrace(t, out)[0]
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		got := row{time.Unix(0, r.Time).UTC().Format(time.RFC3339Nano), r.URL, r.Kind, r.Tag, r.Source, uint64(r.Worker)}
		if got != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got, want[i])
		}
		if r.Seq != uint64(i) || r.Dest != 0 {
			t.Errorf("row %d: seq %d dest %d", i, r.Seq, r.Dest)
		}
	}
}

// Every URI is logged at the node owning its via page; dest is the
// partitioner's node for the URI itself.
func TestHeritrixNodes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "crawl")
	p := sharedData(t, "heritrix", "oldjob5_1140687204304-crawl.log")
	st, err := Heritrix([]string{p}, Options{Out: out, Nodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(Options{Out: filepath.Join(t.TempDir(), "ref"), Nodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	// Reference: the via of each imported line, in order.
	var vias []string
	b, _ := os.ReadFile(p)
	for _, l := range strings.Split(string(b), "\n") {
		if e, err := ParseHeritrixLine(l); err == nil && isHTTP(e.URI) {
			vias = append(vias, e.Via)
		}
	}
	var total int64
	for _, rows := range readTrace(t, out) {
		total += int64(len(rows))
		for _, r := range rows {
			if want := s.NodeOf(r.URL); int(r.Dest) != want {
				t.Fatalf("%s: dest %d, want %d", r.URL, r.Dest, want)
			}
		}
	}
	if total != st.Rows || total != int64(len(vias)) {
		t.Fatalf("%d rows, stats %d, lines %d", total, st.Rows, len(vias))
	}
	// Re-derive each row's node from its line's via and check the per-node counts.
	counts := make([]int64, 4)
	for _, v := range vias {
		node := 0
		if v != "" {
			u, err := s.Normalize(v)
			if err != nil {
				t.Fatal(err)
			}
			node = s.NodeOf(u)
		}
		counts[node]++
	}
	if !reflect.DeepEqual(counts, st.PerNode) {
		t.Errorf("per node %v, want %v", st.PerNode, counts)
	}
	if st.Cross == 0 || st.PerNode[1]+st.PerNode[2]+st.PerNode[3] == 0 {
		t.Errorf("degenerate partition: %v, %d cross", st.PerNode, st.Cross)
	}
}

// The real samples: every http line is imported, dns: lines are skipped,
// nothing is bad.
func TestHeritrixRealSamples(t *testing.T) {
	for _, tc := range []struct {
		file          string
		rows, skipped int64
		seeds, redirs int
	}{
		{"h3-crawl.log", 100, 7, 4, 4},
		{"oldjob5_1140687204304-crawl.log", 713, 30, 15, 9},
		{"crawl-9.log", 212, 7, 3, 7},
	} {
		st, rows := importSample(t, Heritrix, "heritrix", tc.file)
		if st.Rows != tc.rows || st.Skipped != tc.skipped || st.BadLines != 0 {
			t.Errorf("%s: %d rows, %d skipped, %d bad (%v)", tc.file, st.Rows, st.Skipped, st.BadLines, st.Bad)
		}
		seeds, redirs := 0, 0
		for _, r := range rows {
			switch r.Kind {
			case tracefile.URLSeed:
				seeds++
			case tracefile.URLRedirect:
				redirs++
			}
		}
		if seeds != tc.seeds || redirs != tc.redirs {
			t.Errorf("%s: %d seeds, %d redirects", tc.file, seeds, redirs)
		}
	}
}

// A gzip-compressed log reads like the plain one; a cut gzip stream keeps
// what was read and reports the rest as one bad line.
func TestHeritrixGzip(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("testdata", "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plain)
	zw.Close()
	dir := t.TempDir()
	gz := filepath.Join(dir, "crawl.log.gz")
	os.WriteFile(gz, zb.Bytes(), 0o644)
	st, err := Heritrix([]string{gz}, Options{Out: filepath.Join(dir, "a")})
	if err != nil || st.Rows != 9 || st.BadLines != 5 {
		t.Fatalf("gzip: %+v %v", st, err)
	}
	cut := filepath.Join(dir, "cut.log.gz")
	os.WriteFile(cut, zb.Bytes()[:zb.Len()-12], 0o644) // drop the trailer
	st, err = Heritrix([]string{cut}, Options{Out: filepath.Join(dir, "b")})
	if err != nil || st.Rows != 9 || st.BadLines != 6 || !strings.Contains(st.Bad[5].Reason, "unreadable") {
		t.Fatalf("cut gzip: %+v %v", st, err)
	}
}

// A long line is one bad line, not an abort.
func TestHeritrixLongLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "long.log")
	long := "2015-05-22T15:01:12.000Z 200 1 http://a.test/" + strings.Repeat("x", maxLineBytes) + " L http://b.test/ text/html #1 - - - -\n"
	os.WriteFile(p, []byte(long+"2015-05-22T15:01:12.000Z 200 1 http://a.test/ok L http://b.test/ text/html #1 - - - -\n"), 0o644)
	st, err := Heritrix([]string{p}, Options{Out: filepath.Join(dir, "o")})
	if err != nil || st.Rows != 1 || st.BadLines != 1 || st.Bad[0].Line != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	// Nothing importable: an error, and no output left behind.
	os.WriteFile(p, []byte("junk\njunk\n"), 0o644)
	if _, err := Heritrix([]string{p}, Options{Out: filepath.Join(dir, "o2")}); err == nil || !strings.Contains(err.Error(), "no URLs") {
		t.Fatalf("junk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "o2")); err == nil {
		t.Error("output left behind")
	}
}

func ExampleParseHeritrixLine() {
	e, err := ParseHeritrixLine("2015-05-22T15:01:13.551Z   200       2480 http://css3-mediaqueries-js.googlecode.com/svn/trunk/css3-mediaqueries.js LE http://netarkivet.dk/adgang/ text/javascript #001 20150522150113457+91 sha1:XXX - content-size:2707")
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Status, e.URI)
	fmt.Println("via", e.Via, "thread", e.Thread)
	fmt.Println("kind", e.Kind(), "tag", e.Tag(), "fetched in", e.FetchDuration)
	// Output:
	// 200 http://css3-mediaqueries-js.googlecode.com/svn/trunk/css3-mediaqueries.js
	// via http://netarkivet.dk/adgang/ thread 1
	// kind link tag embed fetched in 91ms
}

// FuzzParseHeritrixLine: no panics, and an accepted line's URI, hop path
// and via are its fields 4 to 6.
func FuzzParseHeritrixLine(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "crawl.log"))
	for _, l := range strings.Split(string(b), "\n") {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, err := ParseHeritrixLine(line)
		if err != nil {
			return
		}
		fl := strings.Fields(line)
		if e.URI != fl[3] || (e.HopPath != fl[4] && fl[4] != "-") || (e.Via != fl[5] && fl[5] != "-") {
			t.Fatalf("%q: %+v", line, e)
		}
		if k := e.Kind(); k != tracefile.URLSeed && k != tracefile.URLLink && k != tracefile.URLRedirect {
			t.Fatalf("kind %q", k)
		}
	})
}

// BenchmarkHeritrix imports a 20,000-line crawl.log.
func BenchmarkHeritrix(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&buf, "2015-05-22T15:01:10.521Z   200        564 http://h%d.example.test/p/%d.html LL http://h%d.example.test/ text/html #%03d 20150522150109851+648 sha1:OKIDEBO3TNPIQLIED2HVPC4ICFJPBP5N - content-size:845\n", i%300, i, (i*7)%300, i%100)
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "crawl.log")
	os.WriteFile(in, buf.Bytes(), 0o644)
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Heritrix([]string{in}, Options{Out: filepath.Join(dir, strconv.Itoa(i)), Nodes: 4}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(20000*b.N)/b.Elapsed().Seconds(), "lines/s")
}
