package scenario

import (
	"container/heap"
	"fmt"
	"io"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/progress"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// Stream orders for reading a crawl's URL stream.
const (
	// OrderTime interleaves the nodes' logs by the time column (ties broken
	// by node, then seq): the order in which the crawl as a whole saw its
	// URLs.
	OrderTime = "time"
	// OrderNode reads node 0's log, then node 1's, and so on.
	OrderNode = "node"
)

// Rec is one row of a crawl's URL stream, as passed to the visitor of
// [Each]. URL and Kind alias Arrow buffers and are valid only until the
// visitor returns; clone them (strings.Clone) to keep them.
type Rec struct {
	Node   int    // the node whose host splitter logged the URL
	Index  int64  // position in the stream being read (0-based)
	Seq    uint64 // position in the node's own log
	Time   int64  // Unix nanoseconds
	URL    string // borrowed
	Kind   string // borrowed: seed, link or redirect
	Source uint64 // id of the page the URL was extracted from; 0 for seeds
	Worker uint16
	Dest   uint16 // the node the recorder's splitter assigned it to
}

// cursor walks one node's log row by row.
type cursor struct {
	node int
	r    *tracefile.NodeURLReader
	b    tracefile.URLBatch
	n    int // rows in b (0 before the first batch)
	i    int
}

// advance moves to the next row, reading the next batch when needed.
func (c *cursor) advance() bool {
	c.i++
	for c.i >= c.n {
		if !c.r.Next() {
			return false
		}
		c.b, c.i = c.r.Batch(), 0
		c.n = c.b.Len()
	}
	return true
}

func (c *cursor) time() int64 { return int64(c.b.Time.Value(c.i)) }

func (c *cursor) fill(r *Rec) {
	b, i := c.b, c.i
	r.Node = c.node
	r.Seq = b.Seq.Value(i)
	r.Time = int64(b.Time.Value(i))
	r.URL = b.URL.Value(i)
	r.Kind = b.Kind.Value(i)
	r.Source = b.Source.Value(i)
	r.Worker = b.Worker.Value(i)
	r.Dest = b.Dest.Value(i)
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(a, b int) bool {
	ta, tb := h[a].time(), h[b].time()
	if ta != tb {
		return ta < tb
	}
	return h[a].node < h[b].node
}
func (h cursorHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// openCursor opens node's log and positions it on its first row; ok is false
// for an empty log (the reader is then closed).
func openCursor(rd Reading, dir string, node int) (c *cursor, ok bool, err error) {
	r, err := rd.open(dir, node)
	if err != nil {
		return nil, false, err
	}
	c = &cursor{node: node, r: r, i: -1}
	if !c.advance() {
		err := r.Err()
		rd.done(r)
		r.Close()
		return nil, false, err
	}
	return c, true, nil
}

// Each calls fn for every row of the URL stream of the crawl in dir: the
// union of every node's raw URL log, in order (OrderTime, the default when
// order is "", or OrderNode). It stops at fn's first error and returns it.
// The stream is read once, one batch per node at a time. Cut segments are
// read as far as they are complete; see [Reading.Each].
func Each(dir, order string, fn func(*Rec) error) error { return Reading{}.Each(dir, order, fn) }

// Each is [Each] with rd's treatment of cut segments.
func (rd Reading) Each(dir, order string, fn func(*Rec) error) error {
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	switch order {
	case "", OrderTime:
		return rd.eachByTime(dir, nodes, fn)
	case OrderNode:
		var idx int64
		for _, n := range nodes {
			if err := rd.EachNode(dir, n, func(r *Rec) error {
				r.Index = idx
				idx++
				return fn(r)
			}); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%w: scenario: unknown stream order %q (want %s or %s)", tracefile.ErrBadInput, order, OrderTime, OrderNode)
}

func (rd Reading) eachByTime(dir string, nodes []int, fn func(*Rec) error) (err error) {
	var h cursorHeap
	defer func() {
		for _, c := range h {
			c.r.Close()
		}
	}()
	for _, n := range nodes {
		c, ok, err := openCursor(rd, dir, n)
		if err != nil {
			return fmt.Errorf("scenario: %w", err)
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var r Rec
	for h.Len() > 0 {
		c := h[0]
		c.fill(&r)
		if err := fn(&r); err != nil {
			return err
		}
		r.Index++
		if c.advance() {
			heap.Fix(&h, 0)
			continue
		}
		heap.Pop(&h)
		rerr := c.r.Err()
		rd.done(c.r)
		c.r.Close()
		if rerr != nil {
			return fmt.Errorf("scenario: %w", rerr)
		}
	}
	return nil
}

// EachNode calls fn for every row of node's raw URL log in dir, in log
// order (Rec.Index is the row's position in the node's log). Cut segments
// are read as far as they are complete; see [Reading.EachNode].
func EachNode(dir string, node int, fn func(*Rec) error) error {
	return Reading{}.EachNode(dir, node, fn)
}

// EachNode is [EachNode] with rd's treatment of cut segments.
func (rd Reading) EachNode(dir string, node int, fn func(*Rec) error) error {
	c, ok, err := openCursor(rd, dir, node)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	if !ok {
		return nil
	}
	defer c.r.Close()
	var r Rec
	for {
		c.fill(&r)
		if err := fn(&r); err != nil {
			return err
		}
		r.Index++
		if !c.advance() {
			break
		}
	}
	if err := c.r.Err(); err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	rd.done(c.r)
	return nil
}

// crawlInfo is what a scenario needs to know about the recorded crawl.
type crawlInfo struct {
	nodes       []int  // node numbers with a directory
	recorded    int    // number of nodes of the recorded crawl
	partitioner string // the recorded partitioner's name
	crawlID     string
}

// readCrawlInfo reads the crawl's node list and recorded configuration
// (from the first node log's metadata).
func readCrawlInfo(dir string) (crawlInfo, error) {
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		return crawlInfo{}, fmt.Errorf("scenario: %w", err)
	}
	if len(nodes) == 0 {
		return crawlInfo{}, fmt.Errorf("%w: scenario: %s holds no node-NNN directories", tracefile.ErrBadInput, dir)
	}
	info := crawlInfo{nodes: nodes, recorded: nodes[len(nodes)-1] + 1, partitioner: "host"}
	r, err := tracefile.OpenNodeURLs(dir, nodes[0])
	if err != nil {
		return crawlInfo{}, fmt.Errorf("scenario: %w", err)
	}
	m := r.Meta()
	r.Close()
	if m.Nodes > 0 {
		info.recorded = max(info.recorded, m.Nodes)
	}
	if m.Partitioner != "" {
		info.partitioner = m.Partitioner
	}
	info.crawlID = m.CrawlID
	return info, nil
}

// readCrawlPages is readCrawlInfo and the page logs of every node.
func readCrawlPages(dir string) (crawlInfo, pageIndex, error) {
	info, err := readCrawlInfo(dir)
	if err != nil {
		return crawlInfo{}, nil, err
	}
	pages, err := loadPages(dir, info.nodes)
	return info, pages, err
}

// countRows counts the rows of every node's log (one pass over the batches,
// no row decoding).
func (rd Reading) countRows(dir string, nodes []int) (int64, error) {
	var n int64
	for _, node := range nodes {
		r, err := rd.open(dir, node)
		if err != nil {
			return 0, fmt.Errorf("scenario: %w", err)
		}
		for r.Next() {
			n += int64(r.Batch().Len())
		}
		err = r.Err()
		rd.done(r)
		r.Close()
		if err != nil {
			return 0, fmt.Errorf("scenario: %w", err)
		}
	}
	return n, nil
}

// pageIndex maps page ids to the page's URL, read from the page logs. Page
// ids are unique over the whole crawl (the recorder puts the node number in
// the high bits).
type pageIndex map[uint64]string

// loadPages reads every node's page log in dir. A crawl without page logs
// (an imported URL list) gives an empty index; segments cut before their
// schema hold no rows and are skipped.
func loadPages(dir string, nodes []int) (pageIndex, error) {
	idx := pageIndex{}
	for _, n := range nodes {
		segs, err := tracefile.ListSegments(tracefile.NodeDir(dir, n), tracefile.PrefixPages)
		if err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
		for _, path := range segs {
			s, err := tracefile.OpenSegment(path, tracefile.KindPages)
			if err != nil {
				if tracefile.IsCutSchema(err) {
					continue
				}
				return nil, fmt.Errorf("scenario: %w", err)
			}
			for s.Next() {
				rec := s.Record()
				for i := range int(rec.NumRows()) {
					p := tracefile.PageRow(rec, i)
					idx[p.ID] = p.URL
				}
			}
			s.Close()
		}
	}
	return idx, nil
}

// pageHosts maps page ids to the fingerprint of the page URL's host.
func (p pageIndex) hosts() map[uint64]uint64 {
	m := make(map[uint64]uint64, len(p))
	for id, u := range p {
		m[id] = hostKey(u)
	}
	return m
}

// hostKey is the fingerprint of u's host (authority), the key under which
// scenarios count distinct hosts.
func hostKey(u string) uint64 { return fingerprint.URL(partition.HostOf(u)) }

// hostIndex numbers the distinct hosts of a stream in order of first
// appearance.
type hostIndex map[uint64]int

// see returns the number of u's host, and whether this is its first URL.
func (h hostIndex) see(u string) (i int, first bool) {
	k := hostKey(u)
	i, seen := h[k]
	if !seen {
		i = len(h)
		h[k] = i
	}
	return i, !seen
}

// rowCounter reports the rows a question has read against the crawl's URL
// rows (from its manifest; unknown without one). Single-goroutine, like the
// stream visitors that call it.
type rowCounter struct {
	p *progress.Reporter
	n int64 // rows read so far, reported or not
}

func newRowCounter(w io.Writer, name, dir string) *rowCounter {
	if w == nil {
		return &rowCounter{}
	}
	var total int64
	if m, err := tracefile.ReadManifest(dir); err == nil {
		total = m.URLRows()
	}
	return &rowCounter{p: progress.New(w, name, "rows", total)}
}

// row counts one row; the reporter is told every 4096 rows.
func (c *rowCounter) row() {
	c.n++
	if c.n&4095 == 0 {
		c.p.Set(c.n)
	}
}

func (c *rowCounter) finish() { c.p.Finish() }
