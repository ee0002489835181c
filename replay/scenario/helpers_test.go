package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// crawl is a hand-built crawl directory: per node, its URL rows and pages.
type crawl struct {
	nodes       int
	partitioner string
	flushRows   int // rows per batch; 0 means 3
	urls        map[int][]tracefile.URLRecord
	pages       map[int][]tracefile.PageRecord
}

// write creates the crawl's raw trace in a new temporary directory. Small
// flushes make several batches per node, so batch boundaries are crossed.
func (c *crawl) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	wc := tracefile.DefaultWriterConfig()
	wc.FlushRows = 3
	if c.flushRows > 0 {
		wc.FlushRows = c.flushRows
	}
	part := c.partitioner
	if part == "" {
		part = "host"
	}
	for n := range c.nodes {
		nd := tracefile.NodeDir(dir, n)
		if err := os.MkdirAll(nd, 0o755); err != nil {
			t.Fatal(err)
		}
		m := tracefile.Meta{Kind: tracefile.KindURLs, CrawlID: "test", Node: n, Nodes: c.nodes, Partitioner: part}
		w, err := tracefile.CreateURLWriter(nd, m, wc)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.urls[n] {
			if _, err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if len(c.pages[n]) == 0 {
			continue
		}
		m.Kind = tracefile.KindPages
		pw, err := tracefile.CreatePageWriter(nd, m, wc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range c.pages[n] {
			if err := pw.Append(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Hosts of the hand-built crawl: under partition "host" with N = 2, hostA
// belongs to node 0 and hostB, hostC to node 1 (checked by
// TestTinyCrawlAssignment).
const (
	hostA = "a.test"
	hostB = "b.test"
	hostC = "f.test"
)

var (
	uA  = "http://" + hostA + "/"
	uAx = "http://" + hostA + "/x"
	uB  = "http://" + hostB + "/"
	uBy = "http://" + hostB + "/y"
	uBz = "http://" + hostB + "/z"
	uC  = "http://" + hostC + "/"
)

// tinyCrawl is the two-node crawl every hand-computed answer refers to.
//
//	pages: 1 = A/ and 3 = A/x fetched by node 0; 2 = B/, 4 = B/z, 5 = C/ by node 1
//	node 0: t1 A/ seed w0 | t3 A/x p1 w0 | t4 B/y p1 w1 | t5 A/x p1 w1 | t6 B/y p1 w0 | t9 B/y p3 w0
//	node 1: t2 B/ seed w0 | t2 C/ seed w0 | t7 A/x p2 w0 | t8 B/z p2 w0 | t10 A/x p4 w0 | t12 A/x p5 w0
//
// In time order: r0 s0 s1 r1 r2 r3 | r4 s2 s3 r5 s4 s5 (rows 0..11).
func tinyCrawl() *crawl {
	link := func(t int64, u string, src uint64, w, dest uint16) tracefile.URLRecord {
		return tracefile.URLRecord{Time: t, URL: u, Kind: tracefile.URLLink, Tag: "a", Source: src, Worker: w, Dest: dest}
	}
	seed := func(t int64, u string, dest uint16) tracefile.URLRecord {
		return tracefile.URLRecord{Time: t, URL: u, Kind: tracefile.URLSeed, Dest: dest}
	}
	return &crawl{
		nodes: 2,
		urls: map[int][]tracefile.URLRecord{
			0: {seed(1, uA, 0), link(3, uAx, 1, 0, 0), link(4, uBy, 1, 1, 1), link(5, uAx, 1, 1, 0), link(6, uBy, 1, 0, 1), link(9, uBy, 3, 0, 1)},
			1: {seed(2, uB, 1), seed(2, uC, 1), link(7, uAx, 2, 0, 0), link(8, uBz, 2, 0, 1), link(10, uAx, 4, 0, 0), link(12, uAx, 5, 0, 0)},
		},
		pages: map[int][]tracefile.PageRecord{
			0: {{ID: 1, URL: uA, Status: 200}, {ID: 3, URL: uAx, Status: 200}},
			1: {{ID: 2, URL: uB, Status: 200}, {ID: 4, URL: uBz, Status: 200}, {ID: 5, URL: uC, Status: 200}},
		},
	}
}

func readTrace(t *testing.T, path string) []uint64 {
	t.Helper()
	fps, _, err := tracefile.ReadCondensedAll(path)
	if err != nil {
		t.Fatal(err)
	}
	return fps
}

func exists(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.Size() == 0 {
			t.Errorf("missing output %s: %v", n, err)
		}
	}
}
