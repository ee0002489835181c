package tracefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/fliptest"
)

// isBad reports whether err marks a bad input file.
func isBad(err error) bool { return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrBadInput) }

// flipEveryBit is fliptest.EveryBit over about 1,500 bits of good.
func flipEveryBit(t *testing.T, path string, good []byte, check func() error) {
	t.Helper()
	fliptest.EveryBit(t, path, good, fliptest.Stride(len(good)), isBad, check)
}

// Issue 32, case 4: every single-bit flip of a condensed trace, its footer
// and schema metadata included, is refused by a full read and by
// VerifyChecksum (inspect --verify). Before the checksum covered the
// whole file, 383 of 620 flips in the last 620 bytes passed.
func TestCondensedEveryBitFlipRefused(t *testing.T) {
	good := smallCondensed(t, 40)
	path := filepath.Join(t.TempDir(), "node-000.full.arrow")
	flipEveryBit(t, path, good, func() error {
		if err := readCondensedFile(path); err != nil {
			return err
		}
		return verifyErr(path)
	})
}

// Issue 32, case 3: every single-bit flip of a results table is refused
// by VerifyChecksum (inspect, inspect --verify and export call it).
// Before, a flip in a record batch's metadata passed and moved a column's
// values (a size of 2^62).
func TestTableEveryBitFlipRefused(t *testing.T) {
	good := smallTable(t)
	path := filepath.Join(t.TempDir(), "results.arrow")
	flipEveryBit(t, path, good, func() error { return verifyErr(path) })
}

// Issue 32, case 4: metadata a writer should never have written, carried
// by a file whose checksum matches, is refused: node not below nodes, no
// nodes, an unknown partitioner or subtrace.
func TestCondensedImpossibleMetaRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		m    Meta
		want string
	}{
		{Meta{CrawlID: "c", Node: 4, Nodes: 1, Subtrace: SubtraceFull}, "node 4 of 1 nodes"},
		{Meta{CrawlID: "c", Node: 0, Nodes: 0, Subtrace: SubtraceFull}, "node 0 of 0 nodes"},
		{Meta{CrawlID: "c", Node: -1, Nodes: 2, Subtrace: SubtraceFull}, "node -1 of 2 nodes"},
		{Meta{CrawlID: "c", Nodes: 1, Partitioner: "iost", Subtrace: SubtraceFull}, `unknown partitioner "iost"`},
		{Meta{CrawlID: "c", Nodes: 1, Subtrace: "fulk"}, `subtrace "fulk"`},
	} {
		path := filepath.Join(dir, "t.arrow")
		if err := WriteCondensed(path, tc.m, []uint64{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		for what, err := range map[string]error{"read": readCondensedFile(path), "verify": verifyErr(path), "inspect": Inspect(io.Discard, path, 3)} {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%+v: %s: %v; want an error naming the file and %q", tc.m, what, err, tc.want)
			}
		}
	}
}

// Issue 32, case 5: every single-bit flip of manifest.json is refused by
// ReadManifest, so by inspect --verify and condense, which read it
// through it. Before, 32 of 80 flips passed, among them rows 10496 ->
// 10596 and nodes 1 -> 5.
func TestManifestEveryBitFlipRefused(t *testing.T) {
	dir := t.TempDir()
	m := NewManifest(Meta{CrawlID: "c", Nodes: 2, Partitioner: "host"})
	m.AddNode(0, []SegmentInfo{{File: "urls-000001.arrows", Rows: 10496, Batches: 1, Bytes: 24008, Clean: true, XXH64: "2e1b1f2a35809386"}},
		[]SegmentInfo{{File: "pages-000001.arrows", Rows: 3, Batches: 1, Bytes: 1000, Clean: false, Error: "cut"}})
	m.AddNode(1, nil, nil)
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	flipEveryBit(t, filepath.Join(dir, ManifestName), good, func() error {
		_, err := ReadManifest(dir)
		return err
	})
}

// Impossible manifests refused though they prove themselves, and an old
// manifest (no checksum) still read, its keys checked.
func TestManifestChecks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestName)
	for _, tc := range []struct {
		edit func(m *Manifest)
		want string
	}{
		{func(m *Manifest) { m.Nodes = 0 }, "0 nodes"},
		{func(m *Manifest) { m.NodeInfo[0].Node = 3 }, "node 3"},
		{func(m *Manifest) { m.NodeInfo[0].URLRows++ }, "url_rows"},
		{func(m *Manifest) { m.Partitioner = "iost" }, `partitioner "iost"`},
		{func(m *Manifest) { m.NodeInfo[0].URLSegments[0].File = "../x.arrows" }, `"../x.arrows"`},
	} {
		m := NewManifest(Meta{CrawlID: "c", Nodes: 1, Partitioner: "host"})
		m.AddNode(0, []SegmentInfo{{File: "urls-000001.arrows", Rows: 10, Batches: 1, Bytes: 200, Clean: true}}, nil)
		tc.edit(m)
		if err := WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadManifest(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
	old := `{"format": "crawltrace", "version": 1, "crawl_id": "c", "nodes": 1, "partitioner": "host",
 "created": "2026-01-01T00:00:00Z", "tool_version": "0.1.0",
 "node_info": [{"node": 0, "url_rows": 10, "page_rows": 0,
   "url_segments": [{"file": "urls-000001.arrows", "rows": 10, "batches": 1, "bytes": 200, "clean": true, "xxhash64": "2e1b1f2a35809386"}],
   "page_segments": []}]}`
	os.WriteFile(path, []byte(old), 0o644)
	m, err := ReadManifest(dir)
	if err != nil || m.NodeInfo[0].URLSegments[0].XXH64 != "2e1b1f2a35809386" || m.Sealed {
		t.Fatalf("old manifest: %v %+v", err, m)
	}
	garbled := bytes.Replace([]byte(old), []byte(`"xxhash64"`), []byte(`"xxhasi64"`), 1)
	os.WriteFile(path, garbled, 0o644)
	if _, err := ReadManifest(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "xxhasi64") {
		t.Fatalf("garbled key of an old manifest: %v", err)
	}
}

// recordedSegment writes a crawl whose node 0 has one URL segment that
// manifest.json records, and returns the crawl and the segment's path.
func recordedSegment(t testing.TB) (crawl, path string) {
	t.Helper()
	crawl = t.TempDir()
	segs := writeURLs(t, NodeDir(crawl, 0), genURLs(20, 5), WriterConfig{FlushRows: 10})
	m := NewManifest(testMeta(0))
	m.AddNode(0, segs, nil)
	if err := WriteManifest(crawl, m); err != nil {
		t.Fatal(err)
	}
	return crawl, filepath.Join(NodeDir(crawl, 0), segs[0].File)
}

// Every single-bit flip of a raw segment that manifest.json records is
// refused by Verify (inspect --verify) against its recorded size and
// xxhash64. A segment recorded nowhere (a crawl killed before its
// manifest and its first checkpoint) carries no checksum: a flip in its
// data is detectable only where it breaks the structure.
func TestSegmentEveryBitFlipRefused(t *testing.T) {
	t.Parallel() // CPU only, on files of its own
	crawl, path := recordedSegment(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flipEveryBit(t, path, good, func() error { return Verify(io.Discard, crawl) })
}

// FuzzVerifySegment: a raw segment that manifest.json records verifies
// only as written; anything else is an error marking a bad file.
func FuzzVerifySegment(f *testing.F) {
	crawl, path := recordedSegment(f)
	good, _ := os.ReadFile(path)
	f.Add(good[:len(good)-8])
	fliptest.Fuzz(f, path, good, isBad, func(t *testing.T, data []byte) error {
		err := Verify(io.Discard, crawl)
		if err == nil && !bytes.Equal(data, good) {
			t.Fatal("a changed segment verified")
		}
		return err
	})
}

// FuzzReadManifest: any manifest.json is read as written or refused with
// ErrCorrupt; a change to a sealed one is never accepted.
func FuzzReadManifest(f *testing.F) {
	dir := f.TempDir()
	m := NewManifest(Meta{CrawlID: "c", Nodes: 2, Partitioner: "host"})
	m.AddNode(1, []SegmentInfo{{File: "urls-000001.arrows", Rows: 7, Batches: 1, Bytes: 900, Clean: true, XXH64: "2e1b1f2a35809386"}}, nil)
	if err := WriteManifest(dir, m); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, ManifestName)
	good, _ := os.ReadFile(path)
	fliptest.Fuzz(f, path, good, func(err error) bool { return errors.Is(err, ErrCorrupt) }, func(t *testing.T, data []byte) error {
		got, err := ReadManifest(dir)
		if err == nil && got.Sealed && !bytes.Equal(data, good) {
			t.Fatalf("a changed manifest was accepted:\n%s", data)
		}
		return err
	})
}
