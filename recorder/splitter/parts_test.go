package splitter

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// pinnedSegments is a segments part as written by the recorder at
// 5177645, before the part moved here from the root package: gob
// writes the names of its types (savedSegments, savedLog,
// []tracefile.SegmentInfo, SegmentInfo) and of their fields, so a rename
// or a move that changes them changes every checkpoint's bytes.
const pinnedSegments = "2f7f0301010d73617665645365676d656e747301ff80000102010455524c7301ff82000105506167657301ff8200000036ff810301010873617665644c6f6701ff820001030104446f6e6501ff860001044f70656e01ff840001074e657874536571010600000026ff85020101175b5d747261636566696c652e5365676d656e74496e666f01ff860001ff8400005fff830301010b5365676d656e74496e666f01ff84000107010446696c65010c000104526f7773010400010742617463686573010400010542797465730104000105436c65616e01020001054572726f72010c0001055858483634010c000000ffa3ff80010101011275726c732d3030303030312e6172726f777301fff0010601fe23ae01010210303132333435363738396162636465660001011275726c732d3030303030322e6172726f7773010e010201fe06f403106665646362613938373635343332313000017f000102011370616765732d3030303030312e6172726f7773010a010201fe05780203637574011030303131323233336161626263636464000000"

var pinnedSegmentsValue = savedSegments{
	URLs: savedLog{Done: []tracefile.SegmentInfo{{File: "urls-000001.arrows", Rows: 120, Batches: 3, Bytes: 4567, Clean: true, XXH64: "0123456789abcdef"}},
		Open: tracefile.SegmentInfo{File: "urls-000002.arrows", Rows: 7, Batches: 1, Bytes: 890, XXH64: "fedcba9876543210"}, NextSeq: 127},
	Pages: savedLog{Open: tracefile.SegmentInfo{File: "pages-000001.arrows", Rows: 5, Batches: 1, Bytes: 700, Error: "cut", XXH64: "00112233aabbccdd"}},
}

// The segments part's bytes are pinned, and pinned bytes read back.
func TestSegmentsPartPinned(t *testing.T) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&pinnedSegmentsValue); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b.Bytes()); got != pinnedSegments {
		t.Errorf("the segments part encodes as\n%s\nwant\n%s", got, pinnedSegments)
	}
	raw, _ := hex.DecodeString(pinnedSegments)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "segments"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	urls, pages, err := ReadSegmentsPart(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := pinnedSegmentsValue
	if !reflect.DeepEqual(urls, Position{want.URLs.Done, want.URLs.Open}) || !reflect.DeepEqual(pages, Position{want.Pages.Done, want.Pages.Open}) {
		t.Errorf("pinned bytes read back as %+v, %+v", urls, pages)
	}
}

// partsSplitter is node 0 of 1, logging to the node directory of crawl
// directory dir with writer configuration w.
func partsSplitter(dir string, w tracefile.WriterConfig, front *testFrontier, discarded func(urls, pages int64), onError func(error)) *Splitter {
	part, _ := partition.New("host", 1, 0)
	return New(Options{Node: 0, Nodes: 1, Part: part, BatchSize: 16, DUE: due.NewMemory(16), Frontier: front, OnError: onError,
		Logs: &Logs{Dir: tracefile.NodeDir(dir, 0), Meta: tracefile.Meta{CrawlID: "parts", Nodes: 1}, Writer: w,
			DiscardDir: filepath.Join(dir, "discarded"), Discarded: discarded}})
}

func urlMsg(us ...string) *Msg {
	m := &Msg{}
	for _, u := range us {
		m.URLs = append(m.URLs, URL{URL: u, Kind: tracefile.URLLink})
	}
	return m
}

// A splitter restored from its own parts goes on where the checkpoint
// was: the rows logged after the cut are moved aside (and counted), the
// URL log continues its numbering, the DUE knows what was admitted, and
// the counters are those of the cut.
func TestPartsRestore(t *testing.T) {
	dir := t.TempDir()
	front := &testFrontier{}
	s := partsSplitter(dir, tracefile.WriterConfig{}, front, nil, nil)
	if err := s.OpenLogs(); err != nil {
		t.Fatal(err)
	}
	s.Handle(urlMsg("http://a.test/", "http://b.test/", "http://c.test/"))
	saved := map[string][]byte{}
	for _, p := range s.Parts() {
		var b bytes.Buffer
		if err := p.Save(&b); err != nil {
			t.Fatal(err)
		}
		saved[p.Name()] = b.Bytes()
	}
	cut := map[string]int64{}
	s.CountersPart().Save(cut)
	s.Handle(urlMsg("http://x.test/", "http://y.test/"))
	s.Close()

	var du, dp int64
	front2 := &testFrontier{}
	s2 := partsSplitter(dir, tracefile.WriterConfig{}, front2, func(u, p int64) { du, dp = du+u, dp+p }, nil)
	for _, p := range s2.Parts() {
		if err := p.Load(bytes.NewReader(saved[p.Name()])); err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
	}
	s2.CountersPart().Load(cut)
	if got := s2.Published().URLsLogged; got != 3 {
		t.Errorf("counters restored: %d URLs logged, want 3", got)
	}
	if err := s2.OpenLogs(); err != nil { // the segments part opened them: nothing to do
		t.Fatal(err)
	}
	if du != 2 || dp != 0 {
		t.Errorf("the restore discarded %d URL and %d page rows, want 2 and 0", du, dp)
	}
	s2.Handle(urlMsg("http://a.test/", "http://d.test/"))
	segs := s2.Close()
	if !slices.Equal(front2.added, []string{"http://d.test/"}) {
		t.Errorf("admitted after the restore: %v, want only the new URL", front2.added)
	}
	if got := s2.Published().URLsLogged; got != 5 {
		t.Errorf("%d URLs logged in all, want 5", got)
	}
	if len(segs.URLs) == 0 || len(segs.Pages) == 0 {
		t.Errorf("segments %+v, want the URL and page logs'", segs)
	}
	var got []string
	for i, r := range crawltest.NodeURLRows(t, dir, 0) {
		if r.Seq != uint64(i) {
			t.Errorf("row %d has seq %d", i, r.Seq)
		}
		got = append(got, r.URL)
	}
	if want := []string{"http://a.test/", "http://b.test/", "http://c.test/", "http://a.test/", "http://d.test/"}; !slices.Equal(got, want) {
		t.Errorf("URL log %v, want %v", got, want)
	}
}

// A log whose write failed is dropped, and the segments Close (or Stop)
// returns for the manifest leave it out: the manifest of a failed run
// lists only the logs that did not fail, as it always has.
func TestFailedLogLeftOutOfSegments(t *testing.T) {
	dir := t.TempDir()
	var failed error
	// One row a batch and a segment a batch: every URL opens a new
	// segment file, which fails once the node directory is gone.
	s := partsSplitter(dir, tracefile.WriterConfig{FlushRows: 1, SegmentBytes: 1}, &testFrontier{}, nil, func(err error) { failed = err })
	if err := s.OpenLogs(); err != nil {
		t.Fatal(err)
	}
	s.Handle(urlMsg("http://a.test/"))
	if failed != nil {
		t.Fatal(failed)
	}
	if err := os.RemoveAll(tracefile.NodeDir(dir, 0)); err != nil {
		t.Fatal(err)
	}
	s.Handle(urlMsg("http://b.test/"))
	segs := s.Close()
	if failed == nil {
		t.Fatal("the URL log's write did not fail")
	}
	if len(segs.URLs) != 0 || len(segs.Pages) != 1 {
		t.Errorf("segments after the URL log failed: %d URL, %d page; want 0 and 1", len(segs.URLs), len(segs.Pages))
	}
}
