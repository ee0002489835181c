package recorder

import (
	"encoding/gob"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// The recorder's own checkpoint parts; the format of each is in
// checkpoint.go.

// segmentsPart saves the positions of the node's log writers and, on
// load, cuts the logs back to them and opens writers that continue them.
type segmentsPart struct{ n *node }

type savedLog struct {
	Done    []tracefile.SegmentInfo
	Open    tracefile.SegmentInfo // File "" when no segment was open
	NextSeq uint64
}

type savedSegments struct {
	URLs, Pages savedLog
}

func (segmentsPart) checkpointName() string { return "segments" }

func (p segmentsPart) saveCheckpoint(w io.Writer) error {
	urlw, pagew := p.n.split.URLWriter(), p.n.split.PageWriter()
	var v savedSegments
	var err error
	if urlw != nil {
		if v.URLs.Done, v.URLs.Open, err = urlw.Checkpoint(); err != nil {
			return err
		}
		v.URLs.NextSeq = urlw.Rows()
	}
	if pagew != nil {
		if v.Pages.Done, v.Pages.Open, err = pagew.Checkpoint(); err != nil {
			return err
		}
	}
	return gob.NewEncoder(w).Encode(&v)
}

func (p segmentsPart) loadCheckpoint(r io.Reader) error {
	var v savedSegments
	if err := gob.NewDecoder(r).Decode(&v); err != nil {
		return err
	}
	n := p.n
	if n.cfg.NoTrace {
		return nil
	}
	dir := tracefile.NodeDir(n.cfg.OutDir, n.id)
	urls, du, err := restoreLog(dir, tracefile.PrefixURLs, tracefile.KindURLs, v.URLs, n.discardDir)
	if err != nil {
		return err
	}
	pages, dp, err := restoreLog(dir, tracefile.PrefixPages, tracefile.KindPages, v.Pages, n.discardDir)
	if err != nil {
		return err
	}
	n.resume.DiscardedURLs += du
	n.resume.DiscardedPages += dp
	if err := n.openWriters(); err != nil {
		return err
	}
	n.split.URLWriter().Continue(urls)
	n.split.URLWriter().SetNextSeq(v.URLs.NextSeq)
	n.split.PageWriter().Continue(pages)
	return nil
}

// restoreLog cuts a node's log with prefix back to its checkpointed
// position: segments the checkpoint does not know are moved to
// discardDir, the open segment is cut at its checkpointed length (the
// original kept in discardDir). It returns the segments the log now
// holds and the number of rows moved out of it.
func restoreLog(dir, prefix, kind string, v savedLog, discardDir string) ([]tracefile.SegmentInfo, int64, error) {
	keep := map[string]bool{}
	for _, s := range v.Done {
		keep[s.File] = true
	}
	open := v.Open.File != "" && v.Open.Batches > 0
	if open {
		keep[v.Open.File] = true
	}
	paths, err := tracefile.ListSegments(dir, prefix)
	if err != nil {
		return nil, 0, err
	}
	var dropped int64
	for _, path := range paths {
		name := filepath.Base(path)
		if keep[name] {
			continue
		}
		dropped += segmentRows(path, kind)
		if err := moveInto(path, discardDir); err != nil {
			return nil, 0, err
		}
	}
	out := append([]tracefile.SegmentInfo(nil), v.Done...)
	if open {
		path := filepath.Join(dir, v.Open.File)
		st, err := os.Stat(path)
		if err != nil {
			return nil, 0, fmt.Errorf("checkpoint: segment %s: %w", path, err)
		}
		if st.Size() < v.Open.Bytes {
			return nil, 0, fmt.Errorf("%w: %s: %d bytes, shorter than the %d its checkpoint recorded", tracefile.ErrCorrupt, path, st.Size(), v.Open.Bytes)
		}
		dropped += max(0, segmentRows(path, kind)-v.Open.Rows)
		if err := tracefile.CutSegmentAt(path, v.Open.Bytes, filepath.Join(discardDir, v.Open.File)); err != nil {
			return nil, 0, err
		}
		si := v.Open
		si.Bytes += 8 // the end-of-stream marker
		si.Clean, si.Error = true, ""
		out = append(out, si)
	}
	return out, dropped, nil
}

// segmentRows counts the rows a segment holds (0 when it holds none or
// cannot be read).
func segmentRows(path, kind string) int64 {
	s, err := tracefile.OpenSegment(path, kind)
	if err != nil {
		return 0
	}
	defer s.Close()
	for s.Next() {
	}
	return s.Info().Rows
}

func moveInto(path, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(path, filepath.Join(dir, filepath.Base(path))); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// duePart saves the node's DUE.
type duePart struct{ n *node }

func (duePart) checkpointName() string             { return "due" }
func (p duePart) saveCheckpoint(w io.Writer) error { return p.n.split.DUE().Save(w) }
func (p duePart) loadCheckpoint(r io.Reader) error { return p.n.split.DUE().Load(r) }

// frontierPart saves the node's frontier: every server's queued URLs,
// politeness time and robots.txt state, with the URLs workers held at
// the cut queued first. It streams: spilled URLs are read back one chunk
// at a time, so saving takes no memory in proportion to the frontier.
type frontierPart struct{ n *node }

// savedHost is one server in the frontier part, followed by its URLs in
// groups of at most savedGroup ([savedURLs]).
type savedHost struct {
	Key    string
	NextAt int64 // unix ns; 0 when none
	Robots *robotsState
	Count  int // queued URLs
}

type savedURLs struct {
	URLs []string
	Q    []float64
}

const savedGroup = 4096

func (frontierPart) checkpointName() string { return "frontier" }

func (p frontierPart) saveCheckpoint(w io.Writer) error {
	return p.n.front.save(gob.NewEncoder(w))
}

func (p frontierPart) loadCheckpoint(r io.Reader) error {
	dec := gob.NewDecoder(r)
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var h savedHost
		if err := dec.Decode(&h); err != nil {
			return fmt.Errorf("server %d of %d: %w", i, n, err)
		}
		p.n.front.restoreHost(&h)
		for left := h.Count; left > 0; {
			var g savedURLs
			if err := dec.Decode(&g); err != nil {
				return fmt.Errorf("server %s: %w", h.Key, err)
			}
			if len(g.URLs) == 0 || len(g.URLs) > left || len(g.Q) != len(g.URLs) {
				return fmt.Errorf("server %s: a group of %d URLs and %d qualities, %d left", h.Key, len(g.URLs), len(g.Q), left)
			}
			left -= len(g.URLs)
			p.n.split.Tracker().Add(int64(len(g.URLs)))
			p.n.front.restoreURLs(h.Key, g.URLs, g.Q)
		}
	}
	return nil
}

// save writes the frontier's servers, in the order they were first seen,
// holding the frontier's lock (workers wait meanwhile). URLs held by
// workers come first in their server's list.
func (f *frontier) save(enc *gob.Encoder) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := map[string][]inflightURL{}
	ids := make([]uint64, 0, len(f.inflight))
	for id := range f.inflight {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		x := f.inflight[id]
		held[x.origin] = append(held[x.origin], x)
	}
	hs := make([]*hostState, 0, len(f.s.hosts))
	for _, h := range f.s.hosts {
		if h.queued() > 0 || len(held[h.origin]) > 0 || h.robots != nil {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].seq < hs[j].seq })
	// URLs waiting for their server's DNS lookup (ip mode) follow, one
	// entry per host with no key: they are keyed again when loaded.
	waiting := slices.Sorted(maps.Keys(f.resolving))
	if err := enc.Encode(len(hs) + len(waiting)); err != nil {
		return err
	}
	var g savedURLs
	flush := func() error {
		if len(g.URLs) == 0 {
			return nil
		}
		err := enc.Encode(&g)
		g.URLs, g.Q = g.URLs[:0], g.Q[:0]
		return err
	}
	put := func(u string, q float64) error {
		g.URLs = append(g.URLs, u)
		g.Q = append(g.Q, q)
		if len(g.URLs) == savedGroup {
			return flush()
		}
		return nil
	}
	for _, h := range hs {
		in := held[h.origin]
		sh := savedHost{Key: h.origin, Count: len(in) + h.queued()}
		if !h.nextAt.IsZero() {
			sh.NextAt = h.nextAt.UnixNano()
		}
		if h.robots != nil {
			sh.Robots = h.robots.state()
		}
		if err := enc.Encode(&sh); err != nil {
			return err
		}
		for _, x := range in {
			if err := put(x.url, x.q); err != nil {
				return err
			}
		}
		for _, x := range h.first {
			if err := put(x.url, x.q); err != nil {
				return err
			}
		}
		if err := f.s.eachQueued(&h.urls, put); err != nil {
			return err
		}
		for _, p := range h.parked { // queued again; their origins' robots.txt is fetched anew when due
			for _, x := range p.urls {
				if err := put(x.url, x.q); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	for _, host := range waiting {
		us := f.resolving[host]
		if err := enc.Encode(&savedHost{Count: len(us)}); err != nil {
			return err
		}
		for _, u := range us {
			if err := put(u, f.s.quality(u)); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// restoreHost sets a saved server's politeness and robots.txt state. The
// node calls it, then restoreURLs, before its workers start.
func (f *frontier) restoreHost(sh *savedHost) {
	if sh.Key == "" {
		return // URLs that were waiting for a DNS lookup
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.s.host(sh.Key)
	if sh.Robots != nil {
		h.robots = sh.Robots.rules()
	}
	if sh.NextAt != 0 {
		h.nextAt = time.Unix(0, sh.NextAt)
	}
}

// restoreURLs queues saved URLs on the server of politeness key, where
// they were saved: their keys are not computed again (in ip mode that
// was a DNS lookup per host, under the frontier's lock, at every resume).
// URLs saved with no key were waiting for a lookup, and are added anew.
func (f *frontier) restoreURLs(key string, urls []string, qs []float64) {
	if key == "" {
		for _, u := range urls {
			f.add(u) // keyed as a new URL is
		}
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	for i, u := range urls {
		q := qs[i]
		if math.IsNaN(q) {
			q = 0
		}
		f.s.addKeyed(key, u, q, now)
	}
}

// countersPart saves the node's counters, so stats.json covers the whole
// crawl across restarts.
type countersPart struct{ n *node }

type savedCounters struct {
	Counters                 map[string]int64 // nodeStats.counters
	ByStatus, RobotsByStatus map[int]int64
	FilterReasons            map[string]int64
	Split                    splitter.Stats
	PageID                   uint64
	Resume                   resumeCounters
}

func (countersPart) checkpointName() string { return "counters" }

func (p countersPart) saveCheckpoint(w io.Writer) error {
	n := p.n
	st := &n.st
	v := savedCounters{Counters: map[string]int64{}, Split: n.split.Stats(), PageID: n.pageID.Load(), Resume: n.resume}
	for name, c := range st.counters() {
		v.Counters[name] = c.Load()
	}
	st.mu.Lock()
	v.ByStatus = maps.Clone(st.byStatus)
	v.RobotsByStatus = maps.Clone(st.robotsByStatus)
	v.FilterReasons = maps.Clone(st.filterReasons)
	st.mu.Unlock()
	return gob.NewEncoder(w).Encode(&v)
}

func (p countersPart) loadCheckpoint(r io.Reader) error {
	var v savedCounters
	if err := gob.NewDecoder(r).Decode(&v); err != nil {
		return err
	}
	n := p.n
	st := &n.st
	for name, c := range st.counters() {
		c.Store(v.Counters[name])
	}
	st.byStatus, st.robotsByStatus, st.filterReasons = v.ByStatus, v.RobotsByStatus, v.FilterReasons
	n.split.SetStats(v.Split)
	n.pageID.Store(v.PageID)
	// What this load discarded (segmentsPart ran first) adds to what
	// earlier resumes did.
	n.resume.Resumes += v.Resume.Resumes
	n.resume.DiscardedPages += v.Resume.DiscardedPages
	n.resume.DiscardedURLs += v.Resume.DiscardedURLs
	return nil
}

// resumeCounters count a crawl's restarts and what they dropped from the
// logs: rows written after the last checkpoint before a crash. Those
// pages may be fetched again.
type resumeCounters struct {
	Resumes        int64
	DiscardedPages int64
	DiscardedURLs  int64
}

// pendingPart saves the batches sent to the node and not yet processed at
// the cut (set by the checkpointer) and, on load, keeps them to be
// processed first.
type pendingPart struct {
	batches []*peer.Batch
}

func (*pendingPart) checkpointName() string { return "pending" }

func (p *pendingPart) saveCheckpoint(w io.Writer) error {
	enc := gob.NewEncoder(w)
	if err := enc.Encode(len(p.batches)); err != nil {
		return err
	}
	for _, b := range p.batches {
		if err := enc.Encode(b); err != nil {
			return err
		}
	}
	return nil
}

func (p *pendingPart) loadCheckpoint(r io.Reader) error {
	dec := gob.NewDecoder(r)
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	p.batches = nil
	for i := 0; i < n; i++ {
		b := new(peer.Batch)
		if err := dec.Decode(b); err != nil {
			return fmt.Errorf("batch %d of %d: %w", i, n, err)
		}
		p.batches = append(p.batches, b)
	}
	return nil
}
