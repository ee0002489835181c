package tracefile

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func testMeta(node int) Meta {
	return Meta{CrawlID: "test-crawl", Node: node, Nodes: 4, Partitioner: "host", Created: time.Unix(1700000000, 0)}
}

func genURLs(n int, seed uint64) []URLRecord {
	rng := rand.New(rand.NewPCG(seed, 1))
	kinds := []string{URLSeed, URLLink, URLLink, URLLink, URLRedirect}
	tags := []string{"", "a", "img", "script", "link"}
	out := make([]URLRecord, n)
	for i := range out {
		k := kinds[rng.IntN(len(kinds))]
		tag := tags[rng.IntN(len(tags))]
		if k != URLLink {
			tag = ""
		}
		out[i] = URLRecord{
			Seq:    uint64(i),
			Time:   1700000000e9 + int64(i)*1000,
			URL:    fmt.Sprintf("http://h%d.test/p/%d", rng.IntN(50), rng.IntN(1000)),
			Kind:   k,
			Tag:    tag,
			Source: uint64(rng.IntN(100)),
			Worker: uint16(rng.IntN(64)),
			Dest:   uint16(rng.IntN(4)),
		}
	}
	return out
}

func writeURLs(t testing.TB, dir string, recs []URLRecord, cfg WriterConfig) []SegmentInfo {
	t.Helper()
	w, err := CreateURLWriter(dir, testMeta(0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Segments()
}

func readAllURLs(t testing.TB, crawlDir string, node int) ([]URLRecord, []SegmentInfo) {
	t.Helper()
	r, err := OpenNodeURLs(crawlDir, node)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []URLRecord
	for r.Next() {
		b := r.Batch()
		for i := 0; i < b.Len(); i++ {
			out = append(out, b.Row(i))
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out, r.Segments()
}

func TestURLRoundTripAndRotation(t *testing.T) {
	crawl := t.TempDir()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	recs := genURLs(5000, 1)
	segs := writeURLs(t, NodeDir(crawl, 0), recs, WriterConfig{FlushRows: 300, SegmentBytes: 20 << 10, Allocator: mem})
	mem.AssertSize(t, 0)
	if len(segs) < 3 {
		t.Fatalf("expected rotation into several segments, got %d", len(segs))
	}
	var rows int64
	for _, s := range segs {
		if !s.Clean {
			t.Errorf("segment %s not clean", s.File)
		}
		rows += s.Rows
	}
	if rows != int64(len(recs)) {
		t.Fatalf("segments hold %d rows, want %d", rows, len(recs))
	}
	got, infos := readAllURLs(t, crawl, 0)
	if !reflect.DeepEqual(got, recs) {
		t.Fatalf("round trip mismatch: got %d rows, want %d; first got %+v want %+v", len(got), len(recs), got[0], recs[0])
	}
	// The reader does not hash (the writer's hashes are checked in
	// segsum_test.go): it reports every other field as the writer did.
	noHash := slices.Clone(segs)
	for i := range noHash {
		noHash[i].XXH64 = ""
	}
	if !reflect.DeepEqual(infos, noHash) {
		t.Errorf("reader segment infos %+v != writer %+v", infos, noHash)
	}
}

func TestPageRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := CreatePageWriter(dir, testMeta(1), WriterConfig{FlushRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	pages := []PageRecord{
		{ID: 1, Time: 5, URL: "http://a.test/", Status: 200, ContentType: "text/html", Bytes: 1234, DurationNS: 99, Links: 60, UniqueLinks: 42, Worker: 3, Quality: 0.5},
		{ID: 2, Time: 6, URL: "http://a.test/x", Status: 301, Redirect: "http://a.test/y", Quality: math.NaN()},
		{ID: 3, Time: 7, URL: "http://b.test/", Error: "dial tcp: refused", Truncated: true, Quality: math.NaN()},
	}
	for _, p := range pages {
		if err := w.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	paths, _ := ListSegments(dir, PrefixPages)
	s, err := OpenSegment(paths[0], KindPages)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := s.Meta(); m.Node != 1 || m.CrawlID != "test-crawl" || m.Kind != KindPages || m.Nodes != 4 || m.Partitioner != "host" {
		t.Errorf("metadata %+v", m)
	}
	var got []PageRecord
	for s.Next() {
		for i := 0; i < int(s.Record().NumRows()); i++ {
			got = append(got, PageRow(s.Record(), i))
		}
	}
	if !s.Info().Clean {
		t.Errorf("page segment not clean: %+v", s.Info())
	}
	if len(got) != 3 || got[0] != pages[0] || got[1].Redirect != "http://a.test/y" || !math.IsNaN(got[1].Quality) ||
		got[2].Error != pages[2].Error || !got[2].Truncated || got[1].ContentType != "" {
		t.Errorf("page round trip: %+v", got)
	}
}

func TestCondensedRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), CondensedName(2, SubtraceCross))
	fps := make([]uint64, CondensedBatchRows+1234)
	for i := range fps {
		fps[i] = uint64(i)*0x9e3779b97f4a7c15 + 7
	}
	m := testMeta(2)
	m.Subtrace = SubtraceCross
	if err := WriteCondensed(path, m, fps); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Error("temporary file left behind")
	}
	got, meta, err := ReadCondensedAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fps) {
		t.Fatal("condensed round trip mismatch")
	}
	if meta.Subtrace != SubtraceCross || meta.Node != 2 || meta.Kind != KindCondensed {
		t.Errorf("meta %+v", meta)
	}
	r, _ := OpenCondensed(path)
	defer r.Close()
	if r.Len() != int64(len(fps)) {
		t.Errorf("Len %d", r.Len())
	}
	n := 0
	for r.Next() {
		n += len(r.FPs())
	}
	r.Reset()
	for r.Next() {
		n += len(r.FPs())
	}
	if n != 2*len(fps) {
		t.Errorf("two passes read %d", n)
	}
}

// Cutting a segment anywhere recovers exactly the batches that were
// complete before the cut, and reports the cut.
func TestCutSegmentRecovery(t *testing.T) {
	crawl := t.TempDir()
	recs := genURLs(2000, 2)
	segs := writeURLs(t, NodeDir(crawl, 0), recs, WriterConfig{FlushRows: 100})
	if len(segs) != 1 {
		t.Fatalf("want one segment, got %d", len(segs))
	}
	path := filepath.Join(NodeDir(crawl, 0), segs[0].File)
	full, _ := os.ReadFile(path)
	// Batch end offsets: write prefixes of increasing batch counts.
	bounds := batchEnds(t, recs, 100)
	rng := rand.New(rand.NewPCG(3, 3))
	cuts := []int{len(full) - 8, len(full) - 1, len(full) - 4}
	cuts = append(cuts, bounds...) // exactly on a batch boundary
	for i := 0; i < 40; i++ {
		cuts = append(cuts, bounds[0]+rng.IntN(len(full)-bounds[0]))
	}
	for _, cut := range cuts {
		if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		complete := 0
		for _, b := range bounds[1:] {
			if b <= cut {
				complete++
			}
		}
		got, infos := readAllURLs(t, crawl, 0)
		if len(got) != complete*100 {
			t.Fatalf("cut at %d/%d: recovered %d rows, want %d", cut, len(full), len(got), complete*100)
		}
		if len(got) > 0 && !reflect.DeepEqual(got, recs[:len(got)]) {
			t.Fatalf("cut at %d: recovered rows differ", cut)
		}
		if infos[0].Clean || infos[0].Rows != int64(len(got)) {
			t.Fatalf("cut at %d: info %+v", cut, infos[0])
		}
	}
	os.WriteFile(path, full, 0o644)
	if _, infos := readAllURLs(t, crawl, 0); !infos[0].Clean {
		t.Fatal("intact segment reported cut")
	}
}

// batchEnds returns the file offsets at which the schema and each batch end.
func batchEnds(t *testing.T, recs []URLRecord, per int) []int {
	var out []int
	for k := 0; k*per <= len(recs); k++ {
		dir := t.TempDir()
		w, _ := CreateURLWriter(dir, testMeta(0), WriterConfig{FlushRows: per})
		for _, r := range recs[:k*per] {
			w.Append(r)
		}
		w.Flush()
		if k == 0 {
			// Force the schema out.
			w.seg.w.Close()
			w.seg.cw.w.Flush()
			out = append(out, int(w.seg.cw.n)-len(eosMarker))
			continue
		}
		out = append(out, int(w.seg.cw.n))
	}
	return out
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.arrows")
	os.WriteFile(junk, []byte("this is not arrow at all, just some text\n"), 0o644)
	if _, err := OpenSegment(junk, KindURLs); !errors.Is(err, ErrCorrupt) {
		t.Errorf("junk: %v", err)
	}
	empty := filepath.Join(dir, "empty.arrows")
	os.WriteFile(empty, nil, 0o644)
	if _, err := OpenSegment(empty, KindURLs); !errors.Is(err, ErrCorrupt) {
		t.Errorf("empty: %v", err)
	}
	// A page segment opened as a URL log: wrong kind.
	w, _ := CreatePageWriter(dir, testMeta(0), WriterConfig{})
	w.Close()
	p, _ := ListSegments(dir, PrefixPages)
	if _, err := OpenSegment(p[0], KindURLs); !errors.Is(err, ErrBadInput) {
		t.Errorf("wrong kind: %v", err)
	}
	if _, err := OpenCondensed(junk); !errors.Is(err, ErrCorrupt) {
		t.Errorf("condensed junk: %v", err)
	}
	if _, err := OpenCondensed(empty); !errors.Is(err, ErrCorrupt) {
		t.Errorf("condensed empty: %v", err)
	}
	if _, err := CrawlNodes(dir); !errors.Is(err, ErrBadInput) {
		t.Errorf("no nodes: %v", err)
	}
	if _, err := CrawlNodes(filepath.Join(dir, "missing")); !errors.Is(err, ErrBadInput) {
		t.Errorf("missing dir: %v", err)
	}
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := NewManifest(testMeta(0))
	m.AddNode(1, []SegmentInfo{{File: "urls-000001.arrows", Rows: 10, Clean: true}}, nil)
	m.AddNode(0, []SegmentInfo{{File: "urls-000001.arrows", Rows: 5, Clean: true}, {File: "urls-000002.arrows", Rows: 2}}, nil)
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.URLRows() != 17 || got.NodeInfo[0].Node != 0 || got.NodeInfo[0].URLRows != 7 || got.CrawlID != "test-crawl" {
		t.Errorf("manifest %+v", got)
	}
}

func FuzzSegmentReader(f *testing.F) {
	dir := f.TempDir()
	recs := genURLs(50, 4)
	writeURLs(f, dir, recs, WriterConfig{FlushRows: 10})
	p, _ := ListSegments(dir, PrefixURLs)
	good, _ := os.ReadFile(p[0])
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Add([]byte("ARROW1"))
	path := filepath.Join(f.TempDir(), "f.arrows") // one file per fuzz worker process
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenSegment(path, KindURLs)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBadInput) {
				t.Fatalf("error not marked: %v", err)
			}
			return
		}
		defer s.Close()
		for s.Next() {
			b := NewURLBatch(s.Record())
			for i := 0; i < b.Len(); i++ {
				_ = b.Row(i)
			}
		}
	})
}

// Random byte corruption of a valid segment never panics: the reader either
// refuses the file with a marked error or yields the batches it can check.
func TestRandomCorruption(t *testing.T) {
	corruptions(t, smallSegment(t), rand.New(rand.NewPCG(1, 2)), 600, func(i int, path string) {
		s, err := OpenSegment(path, KindURLs)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBadInput) {
				t.Fatalf("mutation %d: unmarked error %v", i, err)
			}
			return
		}
		for s.Next() {
			b := NewURLBatch(s.Record())
			for r := 0; r < b.Len(); r++ {
				_ = b.Row(r)
			}
		}
		s.Close()
	})
}

// smallSegment is a valid URL segment: 50 rows in batches of 10.
func smallSegment(t testing.TB) []byte {
	dir := t.TempDir()
	writeURLs(t, dir, genURLs(50, 4), WriterConfig{FlushRows: 10})
	p, _ := ListSegments(dir, PrefixURLs)
	good, err := os.ReadFile(p[0])
	if err != nil {
		t.Fatal(err)
	}
	return good
}

// corruptions writes n mutations of good in turn to one file, each with 1
// to 4 bytes set at random by rng, and calls check with each mutation's
// number and the file's path.
func corruptions(t *testing.T, good []byte, rng *rand.Rand, n int, check func(i int, path string)) {
	path := filepath.Join(t.TempDir(), "f.arrows")
	for i := range n {
		data := append([]byte(nil), good...)
		for k := 0; k < 1+rng.IntN(4); k++ {
			data[rng.IntN(len(data))] = byte(rng.IntN(256))
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		check(i, path)
	}
}

// Compressed segments (zstd, lz4) round-trip through the framing checks.
func TestCompressedSegments(t *testing.T) {
	for _, codec := range []string{"zstd", "lz4"} {
		crawl := t.TempDir()
		recs := genURLs(3000, 5)
		writeURLs(t, NodeDir(crawl, 0), recs, WriterConfig{FlushRows: 700, Compression: codec})
		got, infos := readAllURLs(t, crawl, 0)
		if !reflect.DeepEqual(got, recs) || !infos[0].Clean {
			t.Errorf("%s: round trip failed (%d rows, clean %v)", codec, len(got), infos[0].Clean)
		}
	}
}

// A 0-byte segment (created, then killed) is a cut segment with no rows;
// the segments after it are still read.
func TestZeroByteSegment(t *testing.T) {
	crawl := t.TempDir()
	dir := NodeDir(crawl, 0)
	recs := genURLs(500, 5)
	writeURLs(t, dir, recs[:200], WriterConfig{FlushRows: 100})
	if err := os.WriteFile(filepath.Join(dir, SegmentName(PrefixURLs, 2)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	writeURLs(t, dir, recs[200:], WriterConfig{FlushRows: 100}) // segment 3
	got, infos := readAllURLs(t, crawl, 0)
	if len(got) != 500 {
		t.Fatalf("read %d rows, want 500", len(got))
	}
	if len(infos) != 3 || infos[1].Clean || infos[1].Rows != 0 || !strings.Contains(infos[1].Error, "0-byte") {
		t.Fatalf("infos %+v: want segment 2 cut with 0 rows", infos)
	}
}

// A segment holding fewer rows than the manifest records for it is cut,
// even when it ends with an end-of-stream marker.
func TestManifestRowCheck(t *testing.T) {
	crawl := t.TempDir()
	dir := NodeDir(crawl, 0)
	recs := genURLs(1000, 6)
	segs := writeURLs(t, dir, recs, WriterConfig{FlushRows: 100})
	m := NewManifest(testMeta(0))
	m.AddNode(0, segs, nil)
	if err := WriteManifest(crawl, m); err != nil {
		t.Fatal(err)
	}
	if _, infos := readAllURLs(t, crawl, 0); !infos[0].Clean {
		t.Fatalf("intact segment reported cut: %+v", infos[0])
	}
	bounds := batchEnds(t, recs, 100)
	path := filepath.Join(dir, segs[0].File)
	full, _ := os.ReadFile(path)
	cut := append(append([]byte(nil), full[:bounds[4]]...), eosMarker...) // 4 batches, then a clean end
	os.WriteFile(path, cut, 0o644)
	got, infos := readAllURLs(t, crawl, 0)
	if len(got) != 400 || infos[0].Clean || !strings.Contains(infos[0].Error, "600 rows missing") {
		t.Fatalf("rows %d, info %+v: want 400 rows, cut, 600 rows missing", len(got), infos[0])
	}
}

// Readers restricted to byte ranges that split a segment anywhere read
// every row once, in order, through Next (Arrow's reader) and NextURLs
// (the raw frame reader) alike; exactly one of them reports how the
// segment ended, and its Bytes add up to the file's size.
func TestRestrictSplitsSegment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec string
		cut   bool
	}{{"plain", "", false}, {"zstd", "zstd", false}, {"cut", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			crawl := t.TempDir()
			recs := genURLs(5000, 9)
			segs := writeURLs(t, NodeDir(crawl, 0), recs, WriterConfig{FlushRows: 300, Compression: tc.codec})
			if len(segs) != 1 {
				t.Fatalf("%d segments, want 1", len(segs))
			}
			path := filepath.Join(NodeDir(crawl, 0), segs[0].File)
			if tc.cut {
				b, _ := os.ReadFile(path)
				os.WriteFile(path, b[:len(b)-3000], 0o644) // inside the last batch
			}
			st, _ := os.Stat(path)
			size := st.Size()
			for _, k := range []int{1, 2, 3, 7, 40} {
				for _, raw := range []bool{false, true} {
					var urls []string
					var bytes int64
					tails, cuts := 0, 0
					for i := range k {
						s, err := OpenSegment(path, KindURLs)
						if err != nil {
							t.Fatal(err)
						}
						s.Restrict(size*int64(i)/int64(k), size*int64(i+1)/int64(k))
						before := int64(len(urls))
						if raw {
							for s.NextURLs() {
								c := s.URLColumns()
								for j := range c.Len() {
									urls = append(urls, strings.Clone(c.URL(j)))
								}
							}
						} else {
							for s.Next() {
								b := NewURLBatch(s.Record())
								for j := range b.Len() {
									urls = append(urls, b.Row(j).URL)
								}
							}
						}
						info := s.Info()
						if info.Rows != int64(len(urls))-before {
							t.Errorf("k=%d part %d: Info.Rows %d, read %d", k, i, info.Rows, int64(len(urls))-before)
						}
						if s.RowsBefore() != before {
							t.Errorf("k=%d part %d: RowsBefore %d, rows read before it %d", k, i, s.RowsBefore(), before)
						}
						bytes += info.Bytes
						if s.Tail() {
							tails++
						}
						if !info.Clean {
							cuts++
							if !s.Tail() {
								t.Errorf("k=%d part %d: not the tail, but reports a cut: %s", k, i, info.Error)
							}
						}
						s.Close()
					}
					want := len(recs)
					if tc.cut {
						want = len(urls) // the rows before the cut
						if want >= len(recs) || want == 0 {
							t.Fatalf("cut segment: read %d of %d rows", want, len(recs))
						}
					}
					if len(urls) != want || tails != 1 || bytes != size || (cuts == 1) != tc.cut {
						t.Fatalf("k=%d raw=%v: %d rows (want %d), %d tails, %d bytes of %d, %d cut", k, raw, len(urls), want, tails, bytes, size, cuts)
					}
					for j, u := range urls {
						if u != recs[j].URL {
							t.Fatalf("k=%d raw=%v: row %d is %q, want %q", k, raw, j, u, recs[j].URL)
						}
					}
				}
			}
		})
	}
}
