package condense

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/prefetch"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// The map side: every segment of every node this task owns is read once, by
// one of cfg.Workers workers, which hashes each URL, appends the
// fingerprints to the node's condensed traces in log order, and spills the
// first occurrences of (fingerprint, node, URL) to its bucket file, in
// blocks of one fingerprint range each (see buckets.go).

// unit is one segment of one node, or, in a map task of a sharded run,
// the record batches of a segment that start in the byte range [lo, hi) of
// the segment's file.
type unit struct {
	node, seq int // seq: the unit's index among its node's units
	path      string
	// restricted: only the batches starting in [lo, hi) are read (see
	// tracefile.SegmentReader.Restrict).
	restricted bool
	lo, hi     int64
	// head: the map task's first unit, whose range starts inside the
	// segment, after batches an earlier task reads (see HeadPart). Only
	// the first unit of a task can start there: its range is one piece.
	head bool
}

// segFile is one URL log segment of a crawl and its size.
type segFile struct {
	node int
	path string
	size int64
}

// crawlSegments lists the URL log segments of nodes, node by node, each
// node's in order.
func crawlSegments(input string, nodes []int) ([]segFile, error) {
	var out []segFile
	for _, n := range nodes {
		ps, err := tracefile.ListSegments(tracefile.NodeDir(input, n), tracefile.PrefixURLs)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("%w: %s: no URL log segments", tracefile.ErrBadInput, tracefile.NodeDir(input, n))
		}
		for _, p := range ps {
			st, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("condense: %w", tracefile.InputError(err))
			}
			out = append(out, segFile{node: n, path: p, size: st.Size()})
		}
	}
	return out, nil
}

// wholeUnits is every segment of segs, whole, in segment-major order: the
// workers start on different nodes, so most segments are appended directly.
func wholeUnits(segs []segFile) []unit {
	byNode := map[int][]segFile{}
	var nodes []int
	for _, s := range segs {
		if _, ok := byNode[s.node]; !ok {
			nodes = append(nodes, s.node)
		}
		byNode[s.node] = append(byNode[s.node], s)
	}
	var units []unit
	for q := 0; ; q++ {
		added := false
		for _, n := range nodes {
			if q < len(byNode[n]) {
				units = append(units, unit{node: n, seq: q, path: byNode[n][q].path})
				added = true
			}
		}
		if !added {
			return units
		}
	}
}

// shardUnits is map task shard's part of segs: the input, laid end to end
// in node and log order, is cut into shards byte ranges of equal size, and
// the task reads the record batches that start in its range, whatever the
// number of nodes. The tasks' parts of a node, in task order, are the
// node's log in order.
func shardUnits(segs []segFile, shard, shards int) []unit {
	var total int64
	for _, s := range segs {
		total += s.size
	}
	lo, hi := splitPoint(total, shard, shards), splitPoint(total, shard+1, shards)
	var units []unit
	seq := map[int]int{}
	var off int64
	for _, s := range segs {
		start, end := off, off+s.size
		off = end
		// A segment is opened by every task whose range it overlaps; an
		// empty file by the task whose range holds its offset (the last
		// task at the very end).
		overlaps := start < hi && end > lo
		if s.size == 0 {
			overlaps = start >= lo && (start < hi || shard == shards-1)
		}
		if !overlaps {
			continue
		}
		units = append(units, unit{node: s.node, seq: seq[s.node], path: s.path, restricted: true, lo: lo - start, hi: hi - start, head: start < lo})
		seq[s.node]++
	}
	return units
}

// splitPoint is where range i of n of total bytes starts.
func splitPoint(total int64, i, n int) int64 {
	hi, lo := bits.Mul64(uint64(total), uint64(i))
	q, _ := bits.Div64(hi, lo, uint64(n))
	return int64(q)
}

// nodeSink puts a node's fingerprints into its condensed traces in log
// order although its segments are read by several workers: the worker of
// the next segment in order writes straight into the traces; one that is
// ahead writes its fingerprints to a chunk file, appended in order when the
// segments before it are done.
type nodeSink struct {
	mu              sync.Mutex
	node            int
	next            int  // seq of the next segment to append
	busy            bool // a worker is appending segment next directly
	pending         map[int]*chunk
	full, cross     *tracefile.CondensedWriter
	rows, crossRows int64
	meta            tracefile.Meta
	haveMeta        bool
	units           int // the node's units in this run
	infos           map[int][]segInfo
}

// segInfo is how a unit's segment ended, as its reader saw it: tail says
// whether the reader reports the segment's end (see
// tracefile.SegmentReader.Tail), before the rows of the batches before its
// range.
type segInfo struct {
	info   tracefile.SegmentInfo
	tail   bool
	before int64
}

// chunk holds the fingerprints of one segment read ahead of its turn: the
// full trace's in path, the cross trace's in path + ".x".
type chunk struct {
	path string
}

type mapper struct {
	r      *run
	sinks  map[int]*nodeSink
	ranges int // fingerprint ranges the buckets split into
	bucket string
	// inputRead is the bytes of input the segment readers read (or
	// mapped): each segment's tracefile.SegmentReader.BytesRead.
	inputRead atomic.Int64
	// mem is the allowance for spill blocks kept in memory (nil: every
	// block is written to the bucket files); the workers add the blocks
	// they kept to r.kept.
	mem *memAllowance
	// head is what the head unit read, if there is one (set by its
	// worker).
	head *HeadPart
	// agg, when set, is the table the workers count in (see aggTable);
	// spilling is set once it is full and the workers spill. states are
	// the workers' states at the end.
	agg      *aggTable
	spilling atomic.Bool
	// unfiltered is set when the workers left the table because its
	// recent-URL table dropped few repeats: they then spill with no
	// repeat filter. keepOnce gives mem its allowance at the first
	// switch (see spillFromNow).
	unfiltered atomic.Bool
	keepOnce   sync.Once
	states     []*workerState
	// inbox holds each worker's jobs from the others while they count in
	// agg; active is the workers still reading units, and allDone is
	// closed when none is (see drain).
	inbox   []chan *aggJob
	active  atomic.Int32
	allDone chan struct{}
}

// mapNodes runs the map side over units, writing their nodes' traces, and
// buckets into dir (none when ranges is 0). The traces are still being
// closed when it returns: closed waits for them (and fills in BytesOut),
// and must be called before the reports are used.
func (r *run) mapNodes(ctx context.Context, units []unit, ranges int, dir string) ([]NodeReport, tracefile.Meta, int64, func() error, error) {
	m := &mapper{r: r, sinks: map[int]*nodeSink{}, ranges: ranges, bucket: dir}
	if r.keepBytes > 0 && ranges > 0 {
		m.mem = newMemAllowance(r.keepBytes)
	}
	var nodes []int
	for _, u := range units {
		s, ok := m.sinks[u.node]
		if !ok {
			s = &nodeSink{node: u.node, pending: map[int]*chunk{}, infos: map[int][]segInfo{}}
			m.sinks[u.node] = s
			nodes = append(nodes, u.node)
		}
		s.units++
	}
	slices.Sort(nodes)
	work := make(chan unit)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(work)
		for _, u := range units {
			select {
			case work <- u:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	workers := min(r.cfg.Workers, len(units))
	if ranges > 0 && r.aggLimit > 0 {
		limit := r.aggLimit * int64(workers)
		if testAggLimit > 0 {
			limit = testAggLimit
		}
		m.agg = newAggTable(workers, r.cfg.Bits, limit, r.expectURLs)
	}
	m.startExchange(workers)
	m.states = make([]*workerState, workers)
	for w := 0; w < workers; w++ {
		g.Go(func() error { return m.worker(gctx, w, work) })
	}
	err := g.Wait()
	if err == nil {
		err = m.endWorkers()
	}
	for _, ws := range m.states {
		if ws != nil && ws.buckets != nil {
			ws.buckets.abort() // no-op once closed
		}
	}
	r.reading.Finish()
	defer func() {
		for _, s := range m.sinks {
			for _, c := range s.pending {
				os.Remove(c.path)
			}
			if s.full != nil {
				s.full.Abort()
				s.cross.Abort()
			}
		}
	}()
	if err != nil {
		return nil, tracefile.Meta{}, 0, nil, err
	}
	var reps []NodeReport
	var meta tracefile.Meta
	haveMeta, first := false, 0
	for _, n := range nodes {
		s := m.sinks[n]
		if !s.haveMeta {
			if r.cfg.Shards > 1 && nodeHasSchema(r.cfg.Input, n) {
				// This map task's part of the node held no readable
				// segment start; another task reads the rest.
				continue
			}
			return nil, meta, 0, nil, fmt.Errorf("%w: %s: every segment was cut before its schema", tracefile.ErrBadInput, tracefile.NodeDir(r.cfg.Input, n))
		}
		if !haveMeta {
			meta, haveMeta, first = s.meta, true, n
		} else if s.meta.CrawlID != meta.CrawlID || s.meta.Nodes != meta.Nodes || s.meta.Partitioner != meta.Partitioner {
			// A directory holds one crawl (the recorder refuses a
			// second one): nodes of two are not read as one.
			return nil, meta, 0, nil, fmt.Errorf("%w: %s: node %d is of crawl %q (%d nodes, partitioner %s), node %d of crawl %q (%d nodes, partitioner %s): not one crawl",
				tracefile.ErrBadInput, r.cfg.Input, first, meta.CrawlID, meta.Nodes, meta.Partitioner, n, s.meta.CrawlID, s.meta.Nodes, s.meta.Partitioner)
		}
		nr := NodeReport{Node: n, Full: r.outPath(n, tracefile.SubtraceFull), Cross: r.outPath(n, tracefile.SubtraceCross)}
		nr.Rows, nr.CrossRows = s.rows, s.crossRows
		want, err := tracefile.ManifestSegmentRows(r.cfg.Input, n)
		if err != nil {
			return nil, meta, 0, nil, err
		}
		for q := 0; q < s.units; q++ {
			for _, x := range s.infos[q] {
				head := q == 0 && m.head != nil && m.head.Node == n
				si := x.info
				if x.tail {
					// The row check is on the whole segment: the rows of
					// the batches before this reader's range count.
					si.Rows += x.before
					si = tracefile.CheckSegmentRows(si, want)
				}
				nr.BytesIn += si.Bytes
				if !si.Clean {
					if head {
						m.head.Cut = true // the node's first cut segment
					}
					c := tracefile.CutOf(tracefile.NodeDir(r.cfg.Input, n), n, si)
					if r.cfg.Strict {
						return nil, meta, 0, nil, c.Err()
					}
					nr.CutSegments = append(nr.CutSegments, c)
				}
			}
		}
		reps = append(reps, nr)
	}
	// Close (flush, sync, rename) every trace at once, in the background:
	// the syncs wait on the disk (one after another they were a tenth of a
	// run's time), while the caller goes on to verify.
	var cg errgroup.Group
	for i := range reps {
		n, s := reps[i].Node, m.sinks[reps[i].Node]
		for _, t := range []struct {
			w    *tracefile.CondensedWriter
			path string
		}{{s.full, r.tracePath(n, tracefile.SubtraceFull)}, {s.cross, r.tracePath(n, tracefile.SubtraceCross)}} {
			cg.Go(func() error {
				if err := t.w.Close(); err != nil {
					return err
				}
				r.mu.Lock()
				r.written[t.path] = true
				r.mu.Unlock()
				return nil
			})
		}
	}
	for i := range reps {
		s := m.sinks[reps[i].Node]
		s.full, s.cross = nil, nil // the closers own them now
	}
	closed := func() error {
		if err := cg.Wait(); err != nil {
			return err
		}
		for i := range reps {
			n := reps[i].Node
			for _, p := range []string{r.tracePath(n, tracefile.SubtraceFull), r.tracePath(n, tracefile.SubtraceCross)} {
				if st, err := os.Stat(p); err == nil {
					reps[i].BytesOut += st.Size()
				}
			}
		}
		return nil
	}
	r.head = m.head
	return reps, meta, m.inputRead.Load(), closed, nil
}

// tracePath is where this run writes node's subtrace: the output
// directory, or a map task's parts directory.
func (r *run) tracePath(node int, sub string) string {
	return filepath.Join(r.traceDir, tracefile.CondensedName(node, sub))
}

// outPath is where node's subtrace is once the run (or, sharded, the
// merge) is done.
func (r *run) outPath(node int, sub string) string {
	return filepath.Join(r.cfg.Output, tracefile.CondensedName(node, sub))
}

// workerState is what a worker keeps between units: its repeat filter and
// its bucket file.
type workerState struct {
	seen *firstSeen
	id   int
	// recent, while set, has the worker count its rows in the mapper's
	// aggTable instead of spilling them.
	recent *recentURLs
	// rows of the last blocks still to look up in agg (see aggBatch)
	miss, slotted, pend []int32
	// cand: what recentURLs.urlAddrs found for the rows of the last two
	// blocks, by block parity (see seenAt)
	cand    [2][prefetchBlock]uint64
	gate    filterGate
	rgate   recentGate
	node    int
	buckets *bucketWriter
	full    []uint64
	cross   []uint64
	addrs   []uintptr // see firstSeen.slotAddrs
	// out holds a batch's rows whose parts other workers own, by owner,
	// and jobs the jobs they were handed in (see aggJob).
	out  [][]int32
	jobs []*aggJob
	// saddrs is serve's addrs.
	saddrs []uintptr
	ctx    context.Context
}

// filterGate decides, batch by batch, whether a worker's rows go through
// its repeat filter or straight to the spill. The filter pays for itself
// only when most rows are repeats it still holds: on a crawl-like trace
// (94% repeats, mostly recent) it drops three rows in four and saves their
// spill, but on a trace whose repeats are of URLs long gone (40% distinct,
// repeats of any earlier URL) it holds one repeat in ten and costs more
// than spilling every row (measured: 10M rows 2.28 against 1.87 CPU
// seconds, 50M rows 12.9 against 9.9; a lookup costs about half a spill
// record's copy, write, sort and compare). So the gate watches the share
// of rows the filter drops over a window of gateWindow rows, and when it
// is below half, spills the next gateBypass rows unfiltered, then
// watches again. Bypassing only spills more: what is counted stays exact.
//
// A worker counting in memory heeds the gate only when its table is not
// on course to hold every URL of the run (aggTable.projected): a run whose
// URLs fit is counted in memory whatever its share of repeats. On uniform
// 10M (4M distinct, 9.4M records spilled through the gate) the two took
// the same time with free memory (2.41-2.45 against 2.42-2.58 s wall),
// but with the page cache full of other traces writing the spill cost
// reclaim and fresh pages, 3.25-3.45 against 2.42-2.66 s
// (docs/benchmarks.md). A run that does not fit, such as uniform 50M,
// spills early as before: counting until the table filled and spilling
// it then took 15.2-15.5 against 10.8-14.9 s.
type filterGate struct{ windowGate }

// gateWindow and gateBypass are rows of one worker (variables for tests).
var gateWindow, gateBypass int64 = 1 << 20, 8 << 20

// filtering reports whether the next batch goes through the filter.
func (g *filterGate) filtering() bool { return g.open() }

// done counts a batch of rows, of which hits were dropped by the filter;
// bypassed counts the rows spilled unfiltered.
func (g *filterGate) done(rows, hits int64) { g.count(rows, hits, gateWindow, gateBypass, 2) }

// prefetchBlock is how many lookups of the repeat filter overlap their
// cache misses.
const prefetchBlock = 32

// hashAhead and urlAhead are how many blocks ahead of its lookups a block
// is hashed (and its slots prefetched), and its kept URLs prefetched. On
// the crawl-like trace, 3/1, 4/2, 6/3 and 8/4 measured no better than 2/1
// (single runs, within this machine's noise).
const hashAhead, urlAhead = 2, 1

func (m *mapper) worker(ctx context.Context, id int, work <-chan unit) error {
	r := m.r
	ws := &workerState{node: -1, id: id, ctx: ctx}
	m.states[id] = ws
	if m.ranges > 0 {
		var err error
		ws.buckets, err = newBucketWriter(filepath.Join(m.bucket, bucketFileName(id)), m.ranges, spillBuf(r.cfg.MemoryBytes, m.ranges, r.cfg.Workers))
		if err != nil {
			return err
		}
		if m.agg != nil {
			// Blocks are kept only once the workers leave the table
			// (spillFromNow).
			ws.recent = newRecentURLs()
		} else {
			ws.buckets.mem = m.mem
			ws.seen = newFirstSeen(r.cfg.MemoryBytes/4/int64(r.cfg.Workers), 64)
		}
	}
	for u := range work {
		if u.head && ws.buckets != nil {
			if err := m.doHead(ctx, ws, u); err != nil {
				return err
			}
			continue
		}
		if err := m.do(ctx, ws, u); err != nil {
			return err
		}
	}
	if err := m.drain(ctx, ws); err != nil {
		return err
	}
	if ws.buckets != nil {
		r.unfiltered.Add(ws.gate.bypassed)
	}
	if ws.recent != nil {
		ws.recent.free()
		ws.recent = nil
	}
	return nil
}

// endWorkers closes the workers' bucket files once all are done. When
// the table held every URL to the end it is left for countAgg (r.agg);
// when it filled up and the workers spilled, it is spilled too, into a
// bucket file of its own, so that the reduce sees every (URL, node) of
// the run.
func (m *mapper) endWorkers() error {
	r := m.r
	for _, ws := range m.states {
		if ws == nil || ws.buckets == nil {
			continue
		}
		if err := ws.buckets.close(); err != nil {
			return err
		}
		r.mu.Lock()
		r.kept.add(ws.buckets.kept)
		r.mu.Unlock()
	}
	if m.agg == nil {
		return nil
	}
	if !m.spilling.Load() {
		r.agg = m.agg
		return nil
	}
	w, err := newBucketWriter(filepath.Join(m.bucket, bucketFileName(len(m.states))), m.ranges, spillBuf(r.cfg.MemoryBytes, m.ranges, r.cfg.Workers))
	if err != nil {
		return err
	}
	defer w.abort()
	n, err := m.agg.dump(w, func(fp uint64) int { return r.rangeOf(fp, m.ranges) })
	m.agg = nil
	r.spilled.Add(n)
	if err != nil {
		return err
	}
	return w.close()
}

// fewSwitch has the workers leave the table at the recent-URL table's
// first verdict of few repeats when the table is not on course to hold
// the run with a quarter of its limit to spare (aggTable.roomy). A
// variable for tests, which turn it off to reach the exchange with such
// a table. Before, they looked up every row in the table until
// the filter gate's verdict four times as many rows later, then spilled
// through a repeat filter that dropped as few, to files. uniform40pad
// 10M, which does not fit 1 GiB, took 1.64 s (median wall) that way and
// 1.32 s this way, uniform 50M 8.47 and 7.55 s, in 5 interleaved rounds;
// in the DuckDB script, its page cache full, 3.31 and 2.07 s, 11.16 and
// 8.89 s (docs/benchmarks.md, "Against DuckDB").
var fewSwitch = true

// spillFromNow has a worker leave the table and spill from now on. The
// first worker to switch decides for all: after a table that filled up,
// each spills through a repeat filter of its own in a quarter of what
// the table leaves of the budget; after few repeats (a recent-URL table
// that dropped under a quarter of the rows, see recentGate), a filter
// would drop as few, so there is none. Either way the spill keeps its
// blocks in memory, in what the budget leaves beyond the table (it
// stays until endWorkers dumps it), the filters, the spill buffers (an
// eighth, see spillBuf, and a sixteenth for the dump's) and twice
// keepFloor (the rest of the run).
func (m *mapper) spillFromNow(ws *workerState, few bool) {
	r := m.r
	budget := r.cfg.MemoryBytes
	left := max(budget-m.agg.bytes.Load(), 16<<20)
	m.keepOnce.Do(func() {
		m.unfiltered.Store(few)
		keep := left - budget/8 - budget/16 - 2*keepFloor
		if !few {
			keep -= left / 4
		}
		if m.mem == nil && keep > 0 {
			m.mem = newMemAllowance(keep)
		}
	})
	m.spilling.Store(true)
	ws.recent.free()
	ws.recent = nil
	if !m.unfiltered.Load() {
		ws.seen = newFirstSeen(left/4/int64(r.cfg.Workers), 64)
	}
	ws.buckets.mem = m.mem
}

// headBucketFile is the bucket file of a map task's head unit (which
// bucketGlob does not match: the reduce reads it only when the merge keeps
// the head part, see droppedHeads).
const headBucketFile = "head.buckets"

// doHead reads a map task's head unit with a bucket file and a repeat
// filter of its own: the filter drops only repeats of URLs spilled to the
// same file, so with the filter cleared before and after the head unit,
// the head's first occurrences are all in its file and the task's other
// files hold all of theirs. The reduce can then leave the head's records
// out, exactly, when the merge drops the head part.
func (m *mapper) doHead(ctx context.Context, ws *workerState, u unit) error {
	r := m.r
	hw, err := newBucketWriter(filepath.Join(m.bucket, headBucketFile), m.ranges, spillBuf(r.cfg.MemoryBytes, m.ranges, r.cfg.Workers))
	if err != nil {
		return err
	}
	defer hw.abort()
	own := ws.buckets
	ws.buckets = hw
	ws.seen.clear()
	err = m.do(ctx, ws, u)
	ws.buckets = own
	ws.seen.clear()
	if err != nil {
		return err
	}
	return hw.close()
}

// testAfterOpen, when set by a test, runs after a segment is opened.
var testAfterOpen func(path string)

// do reads one segment.
func (m *mapper) do(ctx context.Context, ws *workerState, u unit) (err error) {
	// Large batches are mapped from the file: a segment truncated by
	// another process while it is read faults, which becomes this error
	// rather than a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			// A memory fault carries its address (see SetPanicOnFault);
			// one in the first 64 KiB is a nil dereference, a bug.
			if f, ok := p.(interface{ Addr() uintptr }); ok && f.Addr() >= 1<<16 {
				err = fmt.Errorf("%w: %s: segment changed while being read (a fault at %#x)", tracefile.ErrCorrupt, u.path, f.Addr())
				return
			}
			panic(p)
		}
	}()
	r := m.r
	s := m.sinks[u.node]
	seg, err := tracefile.OpenSegment(u.path, tracefile.KindURLs)
	if tracefile.IsCutSchema(err) {
		if u.restricted && u.lo > 0 {
			// Reported by the map task whose range holds its start.
			return m.finish(s, u, nil, nil)
		}
		// A crash right after rotation: a cut segment with no rows.
		return m.finish(s, u, nil, []segInfo{{info: tracefile.SegmentInfo{File: filepath.Base(u.path), Error: err.Error()}, tail: true}})
	}
	if err != nil {
		return err
	}
	defer seg.Close()
	if u.restricted {
		seg.Restrict(u.lo, u.hi)
	}
	defer func() { m.inputRead.Add(seg.BytesRead()) }()
	if testAfterOpen != nil {
		testAfterOpen(u.path)
	}
	if err := s.setMeta(seg.Meta(), r); err != nil {
		return err
	}
	// Write straight into the traces when this segment is next in order.
	s.mu.Lock()
	direct := s.next == u.seq && !s.busy
	if direct {
		s.busy = true
	}
	s.mu.Unlock()
	var ck *chunk
	var cw *bufio.Writer
	var cf, cxf *os.File
	var cxw *bufio.Writer
	if !direct {
		ck = &chunk{path: filepath.Join(r.cfg.TempDir, fmt.Sprintf("chunk-n%05d-s%06d", u.node, u.seq))}
		if cf, err = os.Create(ck.path); err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		defer cf.Close()
		if cxf, err = os.Create(ck.path + ".x"); err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		defer cxf.Close()
		cw, cxw = bufio.NewWriterSize(cf, 256<<10), bufio.NewWriterSize(cxf, 64<<10)
	}
	if ws.node != u.node && ws.seen != nil {
		ws.seen.clear()
	}
	if ws.node != u.node && ws.recent != nil {
		ws.recent.clear()
	}
	ws.node = u.node
	node := u.node
	var rows, crossRows int64
	for seg.NextURLs() {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := seg.URLColumns()
		n := b.Len()
		var full, cross []uint64
		verify := m.ranges > 0
		onCourse := func() bool { return m.agg.projected(r.rowsIn.Load(), r.totalRows) <= m.agg.limit }
		if verify && ws.recent != nil && !ws.gate.filtering() && onCourse() {
			// The gate would spill from now on, but the table is on
			// course to hold every URL of the run: counting them all in
			// memory spares their spill (see filterGate), and the table
			// is sized for them now.
			ws.gate.watch()
			m.agg.size(m.agg.projectedURLs(r.rowsIn.Load(), r.totalRows))
		}
		// few: the recent-URL table dropped under a quarter of the rows
		// of its last window (recentGate), and the table is not on
		// course to hold the run with room to spare: its URLs will be
		// spilled anyway, and each row until then costs a lookup in it.
		// The verdict comes early (uniform 10M: at 0.46-0.66M rows), when
		// a trace of few repeats is still adding URLs faster than it will
		// later, and on a table at the edge of its limit the projection
		// fell either way (uniform 10M: 590-670 MB against 629). Counting
		// it all in the table then took 2.03 s (wall), spilling 0.98-1.29
		// (8 runs, one in the table): so near the limit, few spills.
		few := fewSwitch && verify && ws.recent != nil && !ws.rgate.looking() && !m.agg.roomy(r.rowsIn.Load(), r.totalRows)
		var hits int64
		if ws.recent != nil && (!ws.gate.filtering() || few || m.spilling.Load()) {
			// Counting in memory pays only while the recent-URL table
			// drops most rows (on a crawl-like trace, three in four): a
			// row it misses costs a lookup in the large table, twice a
			// spill's cost. Where the gate would bypass the filter, or
			// once another worker has switched, this one spills too.
			m.spillFromNow(ws, few)
		}
		filter := verify && ws.gate.filtering() && ws.seen != nil
		var spilled int64
		var err error
		if ws.recent != nil {
			full, cross, hits, spilled, err = m.aggBatch(ws, b, node)
		} else {
			full, cross, hits, spilled, err = m.spillBatch(ws, b, node, verify, filter)
		}
		if err != nil {
			return err
		}
		ws.full, ws.cross = full, cross
		switch {
		case verify && ws.recent == nil && ws.seen == nil:
			ws.gate.passed(int64(n))
		case verify:
			ws.gate.done(int64(n), hits)
		}
		rows += int64(n)
		crossRows += int64(len(cross))
		r.spilled.Add(spilled)
		r.reading.Set(r.rowsIn.Add(int64(n)))
		if direct {
			if err := s.full.AppendSlice(full); err != nil {
				return err
			}
			if err := s.cross.AppendSlice(cross); err != nil {
				return err
			}
			continue
		}
		if _, err := cw.Write(u64bytes(full)); err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		if _, err := cxw.Write(u64bytes(cross)); err != nil {
			return fmt.Errorf("condense: %w", err)
		}
	}
	s.mu.Lock()
	s.rows += rows
	s.crossRows += crossRows
	s.mu.Unlock()
	if u.head {
		m.head = &HeadPart{Node: u.node, Segment: filepath.Base(u.path), Rows: rows, CrossRows: crossRows}
	}
	infos := []segInfo{{info: seg.Info(), tail: seg.Tail(), before: seg.RowsBefore()}}
	if !direct {
		if err := cw.Flush(); err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		if err := cxw.Flush(); err != nil {
			return fmt.Errorf("condense: %w", err)
		}
	}
	return m.finish(s, u, ck, infos)
}

// spillBatch is do's loop over one batch for a worker that spills: the
// rows its repeat filter does not drop (every row while the gate is open)
// go to its bucket file.
func (m *mapper) spillBatch(ws *workerState, b *tracefile.URLColumns, node int, verify, filter bool) (full, cross []uint64, hits, spilled int64, err error) {
	hasher := m.r.hasher
	n := b.Len()
	full, cross = ws.full[:0], ws.cross[:0]
	// A worker that spills while others still count in the table serves
	// the rows they hand it (see aggJob), or they would wait for it until
	// it has read all its units.
	serve := m.exchanging()
	// One pass in blocks, pipelined so that every row's bytes are
	// read while in cache: block j+2 is hashed (and its slots
	// prefetched), block j+1's kept URLs are prefetched, and block j
	// is looked up (its URLs were hashed two blocks ago, so they are
	// still in the L1 cache; a batch is megabytes, so hashing all of
	// it before looking any of it up read every URL from memory twice).
	const blk = prefetchBlock
	nb := (n + blk - 1) / blk
	for j := -hashAhead; j < nb; j++ {
		if h := j + hashAhead; h < nb {
			lo, hi := h*blk, min(h*blk+blk, n)
			full, cross = hashRows(hasher, b, lo, hi, node, full, cross)
			if filter {
				ws.addrs = ws.seen.slotAddrs(full[lo:hi], ws.addrs[:0])
				prefetch.Addrs(ws.addrs)
			}
		}
		if serve && j%pollBlocks == 0 {
			m.poll(ws)
		}
		if verify && !filter && j >= 0 {
			// The gate is open: spill every row.
			for i, hi := j*blk, min(j*blk+blk, n); i < hi; i++ {
				if err := m.spillRow(ws, node, full[i], b.URL(i)); err != nil {
					return full, cross, hits, spilled, err
				}
			}
			spilled += int64(min(j*blk+blk, n) - j*blk)
			continue
		}
		if !filter || j < -urlAhead {
			continue
		}
		if u := j + urlAhead; u < nb {
			ws.addrs = ws.seen.urlAddrs(full[u*blk:min(u*blk+blk, n)], ws.addrs[:0])
			prefetch.Addrs(ws.addrs)
		}
		if j < 0 {
			continue
		}
		for i, hi := j*blk, min(j*blk+blk, n); i < hi; i++ {
			url, fp := b.URL(i), full[i]
			if ws.seen.seen(fp, url) {
				hits++
				continue
			}
			spilled++
			if err := m.spillRow(ws, node, fp, url); err != nil {
				return full, cross, hits, spilled, err
			}
		}
	}
	return full, cross, hits, spilled, nil
}

// spillRow writes one spill record, (fp, node, u), to the worker's bucket
// file.
func (m *mapper) spillRow(ws *workerState, node int, fp uint64, u string) error {
	var rec [10]byte
	binary.LittleEndian.PutUint64(rec[:8], fp)
	binary.LittleEndian.PutUint16(rec[8:], uint16(node))
	return ws.buckets.write(m.r.rangeOf(fp, m.ranges), rec[:], u)
}

// aggBatch is do's loop over one batch for a worker counting in memory:
// pipelined in blocks as the spilling loop, but a row the recent-URL table
// does not drop is added to the mapper's aggTable, two blocks later, once
// its slot and then its copy were prefetched. When the table refuses a
// new URL (it is full), the worker switches to spilling (spillFromNow):
// the rows not yet added are spilled unfiltered, and later batches go
// through its own repeat filter.
func (m *mapper) aggBatch(ws *workerState, b *tracefile.URLColumns, node int) (full, cross []uint64, hits, spilled int64, err error) {
	hasher := m.r.hasher
	n := b.Len()
	full, cross = ws.full[:0], ws.cross[:0]
	// look: the recent-URL table is looked at in this batch (see
	// recentGate).
	look := ws.rgate.looking()
	defer func() { ws.rgate.done(int64(n), hits) }()
	spill := func(i int) error {
		spilled++
		return m.spillRow(ws, node, full[i], b.URL(i))
	}
	// add looks up the rows of rows in the table; after an overflow it
	// spills them.
	add := func(rows []int32) error {
		for k, i := range rows {
			if ws.recent == nil {
				if err := spill(int(i)); err != nil {
					return err
				}
				continue
			}
			fp := full[i]
			loc, ok := m.agg.add(ws.id, fp, node, b.URL(int(i)))
			if !ok {
				m.spillFromNow(ws, false)
				for _, i := range rows[k:] {
					if err := spill(int(i)); err != nil {
						return err
					}
				}
				return nil
			}
			if look {
				ws.recent.put(fp, loc)
			}
		}
		return nil
	}
	// Rows are handed to their parts' owners while the recent table is
	// left aside (as on a uniform trace, where nearly every row is looked
	// up in the table); otherwise the worker looks them up itself under
	// the parts' locks, as few rows reach the table and a row handed
	// over would miss the recent table until its job is done. Either
	// way the worker serves the jobs handed to it.
	serving := m.exchanging()
	exchange := serving && !look && !m.spilling.Load()
	if serving && ws.out == nil {
		ws.out = make([][]int32, len(m.inbox))
	}
	jobs := ws.jobs[:0]
	const blk = prefetchBlock
	nb := (n + blk - 1) / blk
	// Three stages: a block's misses have their slots prefetched, one
	// block later the copies those slots point at, and one block later
	// still they are added.
	miss, slotted, ready := ws.miss[:0], ws.slotted[:0], ws.pend[:0]
	for j := -hashAhead; j < nb+2; j++ {
		if h := j + hashAhead; h < nb {
			lo, hi := h*blk, min(h*blk+blk, n)
			full, cross = hashRows(hasher, b, lo, hi, node, full, cross)
			if look && ws.recent != nil {
				ws.addrs = ws.recent.slotAddrs(full[lo:hi], ws.addrs[:0])
				prefetch.Addrs(ws.addrs)
			}
		}
		if u := j + urlAhead; look && ws.recent != nil && u >= 0 && u < nb {
			lo, hi := u*blk, min(u*blk+blk, n)
			ws.addrs = ws.recent.urlAddrs(m.agg, b, lo, full[lo:hi], ws.cand[u%2][:hi-lo], ws.addrs[:0])
			prefetch.Addrs(ws.addrs)
		}
		miss = miss[:0]
		if j >= 0 && j < nb {
			cand := &ws.cand[j%2]
			for i, hi := j*blk, min(j*blk+blk, n); i < hi; i++ {
				if look && ws.recent != nil && ws.recent.seenAt(m.agg, cand[i-j*blk], full[i], b.URL(i)) {
					hits++
					continue
				}
				if exchange && ws.recent != nil {
					if o := m.owner(full[i]); o != ws.id {
						ws.out[o] = append(ws.out[o], int32(i))
						if len(ws.out[o]) >= jobRows {
							jobs = append(jobs, m.hand(ws, o, b, full, node))
						}
						continue
					}
				}
				miss = append(miss, int32(i))
			}
		}
		if ws.recent != nil {
			ws.addrs = m.agg.slotAddrs(full, miss, ws.addrs[:0])
			ws.addrs = m.agg.urlAddrs(b, full, slotted, ws.addrs)
			prefetch.Addrs(ws.addrs)
		}
		if err := add(ready); err != nil {
			return full, cross, hits, spilled, err
		}
		ready, slotted, miss = slotted, miss, ready
		if serving && j%pollBlocks == 0 {
			m.poll(ws)
		}
	}
	ws.miss, ws.slotted, ws.pend = miss, slotted, ready[:0]
	if !serving {
		return full, cross, hits, spilled, nil
	}
	// The rest of the rows of parts other workers own: handed to them.
	for o, rows := range ws.out {
		if len(rows) > 0 {
			jobs = append(jobs, m.hand(ws, o, b, full, node))
		}
	}
	ws.jobs = jobs
	if err := m.await(ws.ctx, ws, jobs); err != nil {
		return full, cross, hits, spilled, err
	}
	for _, j := range jobs {
		for k, i := range j.rows {
			switch loc := j.locs[k]; {
			case loc != 0 && look && ws.recent != nil:
				ws.recent.put(full[i], loc)
			case loc == 0:
				if ws.recent != nil {
					m.spillFromNow(ws, false)
				}
				if err := spill(int(i)); err != nil {
					return full, cross, hits, spilled, err
				}
			}
		}
	}
	clear(ws.jobs)
	return full, cross, hits, spilled, nil
}

// hashRows appends the fingerprints of rows lo..hi of b to full, and to
// cross those whose dest is not node.
func hashRows(hasher fingerprint.Hasher, b *tracefile.URLColumns, lo, hi, node int, full, cross []uint64) ([]uint64, []uint64) {
	start := len(full)
	data, offsets := b.URLSpan(lo, hi)
	full = hasher.AppendOffsets(full, data, offsets)
	for i, d := range b.Dest[lo:hi] {
		if int(d) != node {
			cross = append(cross, full[start+i])
		}
	}
	return full, cross
}

func u64bytes(v []uint64) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// traceBuf is the size of each of a condensed trace's (up to four) write
// buffers with this budget and nodes nodes (two traces each): all of them
// take a 32nd of the budget, 1 MiB each at most (4 nodes at the default
// 1 GiB), and no buffer less than 64 KiB (so more than a 32nd with many
// nodes on a small budget: 64 nodes at 64 MiB take 32 MiB). At --memory 64MiB, 1 MiB buffers
// took up to 32 MiB beside the budget, and uniform 10M peaked at 29.0
// bytes a distinct URL against 25.8 before them.
func traceBuf(budget int64, nodes int) int {
	return int(min(max(budget/32/int64(8*max(nodes, 1)), 64<<10), 1<<20))
}

// setMeta records the node's metadata from its first readable segment and
// opens its condensed traces.
func (s *nodeSink) setMeta(meta tracefile.Meta, r *run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.haveMeta {
		return nil
	}
	s.haveMeta, s.meta = true, meta
	m := meta
	m.Node, m.Created, m.ToolVersion = s.node, time.Now(), ""
	m.Subtrace = tracefile.SubtraceFull
	var err error
	buf := traceBuf(r.cfg.MemoryBytes, len(r.nodes))
	if s.full, err = tracefile.CreateCondensedBuffered(r.tracePath(s.node, tracefile.SubtraceFull), m, buf); err != nil {
		return err
	}
	m.Subtrace = tracefile.SubtraceCross
	if s.cross, err = tracefile.CreateCondensedBuffered(r.tracePath(s.node, tracefile.SubtraceCross), m, buf); err != nil {
		return err
	}
	return nil
}

// finish marks segment u done: appends it (if it was read ahead) and every
// read-ahead segment after it whose turn has come.
func (m *mapper) finish(s *nodeSink, u unit, ck *chunk, infos []segInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.infos[u.seq] = infos
	if ck == nil && s.busy && s.next == u.seq {
		s.busy = false
		s.next++
	} else if ck == nil && s.next == u.seq {
		s.next++ // a segment with no rows
	} else {
		if ck == nil {
			ck = &chunk{}
		}
		s.pending[u.seq] = ck
	}
	for !s.busy {
		c, ok := s.pending[s.next]
		if !ok {
			return nil
		}
		delete(s.pending, s.next)
		if c.path != "" {
			if err := m.appendChunk(s, c); err != nil {
				return err
			}
		}
		s.next++
	}
	return nil
}

func (m *mapper) appendChunk(s *nodeSink, c *chunk) error {
	defer os.Remove(c.path)
	defer os.Remove(c.path + ".x")
	for _, part := range []struct {
		path string
		w    *tracefile.CondensedWriter
	}{{c.path, s.full}, {c.path + ".x", s.cross}} {
		f, err := os.Open(part.path)
		if err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		br := bufio.NewReaderSize(f, 256<<10)
		buf := make([]byte, 64<<10)
		fps := make([]uint64, 0, len(buf)/8)
		for {
			k, err := io.ReadFull(br, buf)
			fps = fps[:0]
			for i := 0; i+8 <= k; i += 8 {
				fps = append(fps, binary.LittleEndian.Uint64(buf[i:]))
			}
			if werr := part.w.AppendSlice(fps); werr != nil {
				f.Close()
				return werr
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				f.Close()
				return fmt.Errorf("condense: %w", err)
			}
		}
		f.Close()
	}
	return nil
}

// nodeHasSchema reports whether any URL segment of node n holds its
// schema: a map task whose range held none of the node's batches leaves
// the node to the others only then, so a node whose every segment was cut
// before its schema is an error sharded as unsharded.
func nodeHasSchema(input string, n int) bool {
	paths, err := tracefile.ListSegments(tracefile.NodeDir(input, n), tracefile.PrefixURLs)
	if err != nil {
		return true // the readers report it
	}
	for _, p := range paths {
		seg, err := tracefile.OpenSegment(p, tracefile.KindURLs)
		if err == nil {
			seg.Close()
			return true
		}
		if !tracefile.IsCutSchema(err) {
			return true // another error: the readers report it
		}
	}
	return false
}
