package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCheckpointedLog writes rows 0..total-1 of a URL log in node 0 of
// crawl, taking a checkpoint after at least 205 rows where the open
// segment holds a batch (not right after a rotation, so that it is cut
// rather than moved aside). It returns the checkpoint and the rows before
// it. The writer is not closed: the log is left as a kill leaves it.
func writeCheckpointedLog(t *testing.T, crawl string, total int) (done []SegmentInfo, open SegmentInfo, n int) {
	t.Helper()
	meta := Meta{CrawlID: "c", Nodes: 1, Partitioner: "host"}
	w, err := CreateURLWriter(NodeDir(crawl, 0), meta, WriterConfig{FlushRows: 10, SegmentBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	add := func(from, to int) {
		for i := from; i < to; i++ {
			if _, err := w.Append(URLRecord{URL: fmt.Sprintf("http://h.test/%d", i), Kind: URLLink}); err != nil {
				t.Fatal(err)
			}
		}
	}
	n = 205
	add(0, n)
	for {
		if done, open, err = w.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		if open.Batches > 0 {
			break
		}
		add(n, n+5)
		n += 5
	}
	if uint64(n) != w.Rows() {
		t.Fatalf("%d rows written, the writer counts %d", n, w.Rows())
	}
	add(n, total) // after the checkpoint: the open segment grows, more rotate
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return done, open, n
}

// urlsIn returns the URLs of every row of the URL segments in dir.
func urlsIn(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := ListSegments(dir, PrefixURLs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		s, err := OpenSegment(p, KindURLs)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			b := NewURLBatch(s.Record())
			for i := range b.Len() {
				out = append(out, b.Row(i).URL)
			}
		}
		s.Close()
	}
	return out
}

// Restoring cuts a log back to its checkpointed position: rows written
// after it, in the open segment and in segments opened later, move to the
// discard directory (the originals kept whole), and the log reads as if
// the writer had closed at the checkpoint.
func TestRestoreLogCutsBack(t *testing.T) {
	crawl := t.TempDir()
	dir := NodeDir(crawl, 0)
	const total = 400
	done, open, n := writeCheckpointedLog(t, crawl, total)
	before, _ := ListSegments(dir, PrefixURLs)
	orig, err := os.ReadFile(filepath.Join(dir, open.File))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(orig)) <= open.Bytes {
		t.Fatalf("the open segment did not grow after the checkpoint (%d bytes, %d at it)", len(orig), open.Bytes)
	}

	discard := filepath.Join(crawl, "discarded")
	segs, dropped, err := RestoreLog(dir, PrefixURLs, KindURLs, done, open, discard)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != int64(total-n) {
		t.Errorf("dropped %d rows, want %d", dropped, total-n)
	}
	after, _ := ListSegments(dir, PrefixURLs)
	kept, _ := filepath.Glob(filepath.Join(discard, "*"))
	if len(after) != len(done)+1 || len(after) != len(segs) || len(after)+len(kept) != len(before)+1 {
		t.Errorf("%d segments before, %d after, %d kept aside; restored list %d", len(before), len(after), len(kept), len(segs))
	}

	// The log holds rows 0..n-1, in order, every segment ending cleanly.
	rows, infos := readAllURLs(t, crawl, 0)
	if len(rows) != n {
		t.Fatalf("%d rows after the cut, want %d", len(rows), n)
	}
	for i, r := range rows {
		if r.Seq != uint64(i) || r.URL != fmt.Sprintf("http://h.test/%d", i) {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
	for _, si := range infos {
		if !si.Clean {
			t.Errorf("segment %s not clean after the restore: %s", si.File, si.Error)
		}
	}
	var sum int64
	for i, s := range segs {
		sum += s.Rows
		if i < len(infos) && (s.File != infos[i].File || s.Rows != infos[i].Rows || s.Bytes != infos[i].Bytes || !s.Clean) {
			t.Errorf("restored info %+v, the reader found %+v", s, infos[i])
		}
	}
	if sum != int64(n) {
		t.Errorf("restored segment infos hold %d rows, want %d", sum, n)
	}

	// The cut segment is the original's first open.Bytes bytes and an
	// end-of-stream marker; the original is in the discard directory,
	// whole.
	cut, _ := os.ReadFile(filepath.Join(dir, open.File))
	want := append(bytes.Clone(orig[:open.Bytes]), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
	if !bytes.Equal(cut, want) {
		t.Errorf("cut segment: %d bytes, want the %d checkpointed ones and the marker", len(cut), open.Bytes)
	}
	if moved, _ := os.ReadFile(filepath.Join(discard, open.File)); !bytes.Equal(moved, orig) {
		t.Errorf("discarded copy of %s: %d bytes, want the original's %d", open.File, len(moved), len(orig))
	}
	// Every row after the checkpoint is in the discard directory.
	aside := map[string]bool{}
	for _, u := range urlsIn(t, discard) {
		aside[u] = true
	}
	for i := n; i < total; i++ {
		if u := fmt.Sprintf("http://h.test/%d", i); !aside[u] {
			t.Fatalf("row %d (%s) neither in the log nor in the discard directory", i, u)
		}
	}
}

// A log whose open segment is shorter than its checkpoint recorded
// (truncated by hand or by a disk fault) is corrupt, named in the error.
func TestRestoreLogShortSegment(t *testing.T) {
	crawl := t.TempDir()
	dir := NodeDir(crawl, 0)
	done, open, _ := writeCheckpointedLog(t, crawl, 300)
	path := filepath.Join(dir, open.File)
	if err := os.Truncate(path, open.Bytes-1); err != nil {
		t.Fatal(err)
	}
	_, _, err := RestoreLog(dir, PrefixURLs, KindURLs, done, open, filepath.Join(crawl, "discarded"))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("restore of a short segment: %v", err)
	}
}

// Discarding a whole log moves every segment aside and counts its rows;
// a node directory not created yet holds none.
func TestDiscardLog(t *testing.T) {
	crawl := t.TempDir()
	dir := NodeDir(crawl, 0)
	discard := filepath.Join(crawl, "discarded")
	if n, err := DiscardLog(dir, PrefixURLs, KindURLs, discard); n != 0 || err != nil {
		t.Fatalf("no node directory: %d rows, %v", n, err)
	}
	writeCheckpointedLog(t, crawl, 300)
	before, _ := ListSegments(dir, PrefixURLs)
	n, err := DiscardLog(dir, PrefixURLs, KindURLs, discard)
	if err != nil || n != 300 {
		t.Fatalf("discarded %d rows (%v), want 300", n, err)
	}
	if after, _ := ListSegments(dir, PrefixURLs); len(after) != 0 {
		t.Errorf("%d segments left in the log", len(after))
	}
	if aside, _ := ListSegments(discard, PrefixURLs); len(aside) != len(before) {
		t.Errorf("%d segments in the discard directory, want %d", len(aside), len(before))
	}
	if u := urlsIn(t, discard); len(u) != 300 || u[0] != "http://h.test/0" || u[299] != "http://h.test/299" {
		t.Errorf("%d rows in the discard directory", len(u))
	}
}
