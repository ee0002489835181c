package tracefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/crawltrace/crawltrace/internal/fliptest"
)

// fileSum is the xxhash64 of the file at path (or of its first n bytes,
// n >= 0), computed here from the bytes on disk.
func fileSum(t *testing.T, path string, n int64) (string, int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n >= 0 {
		b = b[:n]
	}
	return fmt.Sprintf("%016x", xxhash.Sum64(b)), int64(len(b))
}

// The writers record, for every segment they close (rotated or the last
// one), its size and the xxhash64 of its bytes; a checkpoint records the
// open segment's prefix and its hash.
func TestSegmentHashes(t *testing.T) {
	crawl := t.TempDir()
	dir := NodeDir(crawl, 0)
	w, err := CreateURLWriter(dir, testMeta(0), WriterConfig{FlushRows: 300, SegmentBytes: 20 << 10})
	if err != nil {
		t.Fatal(err)
	}
	recs := genURLs(5000, 3)
	for i, r := range recs {
		if _, err := w.Append(r); err != nil {
			t.Fatal(err)
		}
		if i == 2500 {
			done, open, err := w.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			if len(done) == 0 || open.Bytes == 0 {
				t.Fatalf("checkpoint: %d closed segments, open %+v: want rotations and an open batch", len(done), open)
			}
			if sum, _ := fileSum(t, filepath.Join(dir, open.File), open.Bytes); open.XXH64 != sum {
				t.Errorf("checkpoint: open segment %s: xxhash64 %q, its first %d bytes hash to %s", open.File, open.XXH64, open.Bytes, sum)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pw, err := CreatePageWriter(dir, testMeta(0), WriterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := pw.Append(PageRecord{ID: uint64(i), URL: fmt.Sprintf("http://h.test/%d", i), Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	segs := append(w.Segments(), pw.Segments()...)
	if len(segs) < 4 {
		t.Fatalf("%d segments: want several rotated URL segments and a page segment", len(segs))
	}
	for _, s := range segs {
		sum, size := fileSum(t, filepath.Join(dir, s.File), -1)
		if s.XXH64 != sum || s.Bytes != size {
			t.Errorf("%s: recorded %d bytes, xxhash64 %q; the file has %d bytes hashing to %s", s.File, s.Bytes, s.XXH64, size, sum)
		}
	}

	// The manifest carries them; one written without them reads too.
	m := NewManifest(testMeta(0))
	m.AddNode(0, w.Segments(), pw.Segments())
	if err := WriteManifest(crawl, m); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(crawl, ManifestName))
	if !bytes.Contains(raw, []byte(`"xxhash64": "`+segs[0].XXH64+`"`)) {
		t.Errorf("manifest.json does not record %s's xxhash64:\n%s", segs[0].File, raw)
	}
	back, err := ReadManifest(crawl)
	if err != nil || back.NodeInfo[0].URLSegments[0] != segs[0] {
		t.Errorf("manifest read back: %+v, %v; want %+v", back.NodeInfo[0].URLSegments[0], err, segs[0])
	}
	stripHashes(t, crawl)
	old, err := ReadManifest(crawl)
	if err != nil || old.NodeInfo[0].URLSegments[0].XXH64 != "" || old.NodeInfo[0].URLSegments[0].Rows != segs[0].Rows {
		t.Errorf("manifest without hashes: %+v, %v", old.NodeInfo[0].URLSegments[0], err)
	}
}

// stripHashes rewrites crawl's manifest.json as a crawltrace that did
// not record segment hashes (nor seal its manifests) wrote it.
func stripHashes(t *testing.T, crawl string) {
	t.Helper()
	path := filepath.Join(crawl, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, node := range v["node_info"].([]any) {
		for _, key := range []string{"url_segments", "page_segments"} {
			for _, s := range node.(map[string]any)[key].([]any) {
				if _, ok := s.(map[string]any)["xxhash64"]; ok {
					delete(s.(map[string]any), "xxhash64")
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the manifest records no xxhash64")
	}
	delete(v, "checksum") // as written before manifests carried one
	if err := WriteJSON(path, v); err != nil {
		t.Fatal(err)
	}
}

// writeCrawl writes a small finished crawl: node 0's URL log in several
// segments, a page log, and the manifest. It returns the URL segments.
func writeCrawl(t *testing.T, crawl string) []SegmentInfo {
	t.Helper()
	dir := NodeDir(crawl, 0)
	w, err := CreateURLWriter(dir, testMeta(0), WriterConfig{FlushRows: 10, SegmentBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		if _, err := w.Append(URLRecord{URL: fmt.Sprintf("http://h.test/%d", i), Kind: URLLink}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pw, err := CreatePageWriter(dir, testMeta(0), WriterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Append(PageRecord{URL: "http://h.test/0", Status: 200}); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	m := NewManifest(testMeta(0))
	m.AddNode(0, w.Segments(), pw.Segments())
	if err := WriteManifest(crawl, m); err != nil {
		t.Fatal(err)
	}
	if len(w.Segments()) < 3 {
		t.Fatalf("%d URL segments, want several", len(w.Segments()))
	}
	return w.Segments()
}

// Verify of a crawl directory checks every segment its manifest records
// against the recorded size and xxhash64: a URL byte flipped in one is a
// failure naming that file; segments recorded without a hash (an older
// crawl) are read and reported as unchecked; a listed segment missing is
// a failure naming it.
func TestVerifyCrawlHashes(t *testing.T) {
	crawl := t.TempDir()
	segs := writeCrawl(t, crawl)
	var out bytes.Buffer
	if err := Verify(&out, crawl); err != nil {
		t.Fatalf("untouched crawl: %v\n%s", err, out.String())
	}
	if n := strings.Count(out.String(), "size and xxhash64 OK"); n != len(segs)+1 {
		t.Errorf("untouched crawl: %d segments hash-checked, want %d:\n%s", n, len(segs)+1, out.String())
	}

	bad := filepath.Join(NodeDir(crawl, 0), segs[1].File)
	fliptest.First(t, bad, "http://h.test/", len("http://"))
	out.Reset()
	err := Verify(&out, crawl)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "xxhash64 mismatch") {
		t.Errorf("flipped byte in %s: %v", bad, err)
	}
	sum, _ := fileSum(t, bad, -1)
	wantLine := fmt.Sprintf("%s: FAILED: ", bad)
	if lines := linesWith(out.String(), wantLine); len(lines) != 1 || !strings.Contains(lines[0], sum) || !strings.Contains(lines[0], segs[1].XXH64) {
		t.Errorf("want one line naming %s with its hash %s and the recorded %s:\n%s", bad, sum, segs[1].XXH64, out.String())
	}
	if strings.Count(out.String(), "FAILED") != 1 {
		t.Errorf("only %s is damaged:\n%s", bad, out.String())
	}

	// An older crawl's manifest, without hashes: the flip goes unseen
	// (the segment reads well), and every segment says so.
	stripHashes(t, crawl)
	out.Reset()
	if err := Verify(&out, crawl); err != nil {
		t.Errorf("crawl without hashes: %v\n%s", err, out.String())
	}
	if n := strings.Count(out.String(), "unchecked"); n != len(segs)+1 {
		t.Errorf("crawl without hashes: %d segments reported unchecked, want %d:\n%s", n, len(segs)+1, out.String())
	}

	// A listed segment missing, even without hashes.
	gone := filepath.Join(NodeDir(crawl, 0), segs[2].File)
	os.Remove(gone)
	out.Reset()
	err = Verify(&out, crawl)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), gone) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing %s: %v\n%s", gone, err, out.String())
	}
}

func linesWith(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// A resume checks the segments its checkpoint lists (CheckLog) before it
// cuts the log back (RestoreLog): a changed byte (hash), a truncated or
// missing segment (size, with or without the hash check); the
// checkpointed prefix of the open segment is checked by RestoreLog in
// any case. A segment recorded without a hash (an older checkpoint) is
// checked for size only.
func TestRestoreLogChecksSegments(t *testing.T) {
	type damage func(t *testing.T, dir string, done []SegmentInfo, open SegmentInfo) (path, what string)
	flipDone := func(t *testing.T, dir string, done []SegmentInfo, _ SegmentInfo) (string, string) {
		p := filepath.Join(dir, done[0].File)
		fliptest.First(t, p, "http://h.test/", len("http://"))
		return p, "xxhash64 mismatch"
	}
	for _, tc := range []struct {
		name    string
		damage  damage
		hash    bool
		refused bool
		strip   bool // the checkpoint records no hashes
	}{
		{name: "clean", damage: nil, hash: true},
		{name: "flip closed", damage: flipDone, hash: true, refused: true},
		{name: "flip closed, sizes only", damage: flipDone, hash: false},
		{name: "flip closed, no hash recorded", damage: flipDone, hash: true, strip: true},
		{name: "truncate closed", hash: false, refused: true, damage: func(t *testing.T, dir string, done []SegmentInfo, _ SegmentInfo) (string, string) {
			p := filepath.Join(dir, done[0].File)
			os.Truncate(p, done[0].Bytes-10)
			return p, fmt.Sprintf("%d bytes, the checkpoint records %d", done[0].Bytes-10, done[0].Bytes)
		}},
		{name: "missing closed", hash: false, refused: true, strip: true, damage: func(t *testing.T, dir string, done []SegmentInfo, _ SegmentInfo) (string, string) {
			p := filepath.Join(dir, done[len(done)-1].File)
			os.Remove(p)
			return p, "missing"
		}},
		{name: "flip open prefix", hash: true, refused: true, damage: func(t *testing.T, dir string, _ []SegmentInfo, open SegmentInfo) (string, string) {
			p := filepath.Join(dir, open.File)
			fliptest.First(t, p, "http://h.test/", len("http://"))
			return p, "xxhash64 mismatch: its first"
		}},
		{name: "flip open prefix, sizes only", hash: false, refused: true, damage: func(t *testing.T, dir string, _ []SegmentInfo, open SegmentInfo) (string, string) {
			p := filepath.Join(dir, open.File)
			fliptest.First(t, p, "http://h.test/", len("http://"))
			return p, "xxhash64 mismatch: its first"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crawl := t.TempDir()
			dir := NodeDir(crawl, 0)
			done, open, _ := writeCheckpointedLog(t, crawl, 400)
			if tc.strip {
				for i := range done {
					done[i].XXH64 = ""
				}
				open.XXH64 = ""
			}
			var path, what string
			if tc.damage != nil {
				path, what = tc.damage(t, dir, done, open)
			}
			before, _ := ListSegments(dir, PrefixURLs)
			discard := filepath.Join(crawl, "discarded")
			err := CheckLog(dir, done, open, "the checkpoint", tc.hash)
			var segs []SegmentInfo
			if err == nil {
				segs, _, err = RestoreLog(dir, PrefixURLs, KindURLs, done, open, discard)
			}
			if tc.refused {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), what) {
					t.Fatalf("restore: %v; want an error naming %s: %s", err, path, what)
				}
				if after, _ := ListSegments(dir, PrefixURLs); len(after) != len(before) {
					t.Errorf("a refused restore changed the log: %d segments, %d before", len(after), len(before))
				}
				if _, err := os.Stat(discard); err == nil {
					t.Error("a refused restore moved segments aside")
				}
				return
			}
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			// The restored list keeps what the checkpoint records of the
			// closed segments (a damage a sizes-only resume let through
			// stays visible to inspect --verify) and records the cut
			// segment as it now is, with the hash of the cut file.
			if len(segs) != len(done)+1 {
				t.Fatalf("restored %d segments, want the %d closed ones and the cut one", len(segs), len(done))
			}
			for i, s := range done {
				if segs[i] != s {
					t.Errorf("restored %+v, the checkpoint records %+v", segs[i], s)
				}
			}
			cut := segs[len(done)]
			sum, size := fileSum(t, filepath.Join(dir, cut.File), -1)
			if cut.Bytes != size || (!tc.strip && cut.XXH64 != sum) || (tc.strip && cut.XXH64 != "") {
				t.Errorf("cut %s: %d bytes, xxhash64 %q; the file: %d bytes, %s", cut.File, cut.Bytes, cut.XXH64, size, sum)
			}
			if tc.damage == nil {
				for _, s := range segs {
					if sum, _ := fileSum(t, filepath.Join(dir, s.File), -1); s.XXH64 != sum {
						t.Errorf("%s: recorded %s, the file hashes to %s", s.File, s.XXH64, sum)
					}
				}
			}
		})
	}
}
