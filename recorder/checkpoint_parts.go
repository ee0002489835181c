package recorder

import (
	"encoding/gob"
	"fmt"
	"io"
	"maps"

	"github.com/crawltrace/crawltrace/internal/counters"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// The recorder's own checkpoint parts (the splitter and the frontier
// offer theirs: splitter.Splitter.Parts, frontier.Frontier.Part); the
// format of each is in recorder/checkpoint's package doc.

// countersPart saves the node's counters, so stats.json covers the whole
// crawl across restarts.
type countersPart struct{ n *node }

// savedCounters is the counters part. Counters holds every declared
// counter of the workers (worker.Counters) and the splitter
// (splitter.Stats, saved and loaded by the splitter's
// splitter.CountersPart) by its stats.json name. gob matches fields by name:
// renaming one of these fields changes the format.
type savedCounters struct {
	Counters                 map[string]int64
	ByStatus, RobotsByStatus map[int]int64
	BytesByStatus            map[int]int64
	FilterReasons            map[string]int64
	// Split is the splitter's counters as checkpoints written before
	// Counters held them saved them; read, never written.
	Split  legacySplitStats
	PageID uint64
	Resume resumeCounters
}

// legacySplitStats are splitter.Stats as they were declared before the
// splitter's counters were saved by name (gob matches fields by name).
type legacySplitStats struct {
	Logged, Local, Cross       int64
	CacheSuppressed, CacheSent int64
	BatchesSent, URLsSent      int64
	Received, ReceivedBatches  int64
	Admitted                   int64
}

// legacyCounterNames are the names under which checkpoints written before
// the workers' counters were saved by their stats.json names saved the
// three whose names differed.
var legacyCounterNames = map[string]string{"attempts": "fetch_attempts", "html": "html_pages", "not_html": "not_html_skipped"}

// byName is every counter of l by its stats.json name.
func (l legacySplitStats) byName() map[string]int64 {
	return map[string]int64{"urls_logged": l.Logged, "local": l.Local, "cross": l.Cross,
		"splitter_cache_suppressed": l.CacheSuppressed, "splitter_cache_sent": l.CacheSent,
		"batches_sent": l.BatchesSent, "urls_sent": l.URLsSent,
		"urls_received": l.Received, "batches_received": l.ReceivedBatches, "urls_admitted": l.Admitted}
}

func (countersPart) Name() string { return "counters" }

func (p countersPart) Save(w io.Writer) error {
	n := p.n
	st := n.st.Snapshot()
	v := savedCounters{Counters: map[string]int64{}, PageID: n.st.PageSeq.Load(), Resume: n.resume,
		ByStatus: st.ByStatus, RobotsByStatus: st.RobotsByStatus, BytesByStatus: st.BytesByStatus, FilterReasons: st.FilterReasons}
	counters.Put(v.Counters, st.Counters)
	n.split.CountersPart().Save(v.Counters)
	return gob.NewEncoder(w).Encode(&v)
}

func (p countersPart) Load(r io.Reader) error {
	var v savedCounters
	if err := gob.NewDecoder(r).Decode(&v); err != nil {
		return err
	}
	if v.Counters == nil {
		v.Counters = map[string]int64{}
	}
	for old, name := range legacyCounterNames {
		if x, ok := v.Counters[old]; ok {
			v.Counters[name] = x
		}
	}
	if v.Split != (legacySplitStats{}) {
		maps.Copy(v.Counters, v.Split.byName())
	}
	n := p.n
	n.st.Restore(worker.Snapshot{Counters: counters.Get[worker.Counters[int64]](v.Counters),
		Detail: worker.Detail{ByStatus: v.ByStatus, RobotsByStatus: v.RobotsByStatus, BytesByStatus: v.BytesByStatus, FilterReasons: v.FilterReasons}})
	n.split.CountersPart().Load(v.Counters)
	n.st.PageSeq.Store(v.PageID)
	// What this load discarded (segmentsPart ran first) adds to what
	// earlier resumes did.
	n.resume.Resumes += v.Resume.Resumes
	n.resume.DiscardedPages += v.Resume.DiscardedPages
	n.resume.DiscardedURLs += v.Resume.DiscardedURLs
	n.resume.DiscardedWARCBytes += v.Resume.DiscardedWARCBytes
	return nil
}

// resumeCounters count a crawl's restarts and what they dropped from the
// logs: rows written after the last checkpoint before a crash. Those
// pages may be fetched again.
type resumeCounters struct {
	Resumes        int64
	DiscardedPages int64
	DiscardedURLs  int64
	// DiscardedWARCBytes are the WARC bytes a resume cut (warcout).
	DiscardedWARCBytes int64
}

// pendingPart saves the batches sent to the node and not yet processed at
// the cut (set by the checkpointer) and, on load, keeps them to be
// processed first.
type pendingPart struct {
	batches []*peer.Batch
}

func (*pendingPart) Name() string { return "pending" }

func (p *pendingPart) Save(w io.Writer) error {
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

func (p *pendingPart) Load(r io.Reader) error {
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
