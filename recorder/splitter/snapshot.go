package splitter

import "github.com/crawltrace/crawltrace/recorder/due"

// Snapshot is what the splitter publishes of the state its goroutine owns,
// for readers on other goroutines (the crawl's stats, its metrics): its
// counters and its DUE's. It is published every FlushTick, after a
// checkpoint's cut, and when the splitter stops, so the snapshot read
// after Stop is final.
type Snapshot struct {
	Stats
	// DUEDisk: the DUE is the disk DUE (from the start, or since the
	// in-memory one gave way to it, DUESwitched URLs in).
	DUEDisk     bool
	DUELen      int64
	DUEBytes    int64
	DUESwitched int64
	// DUECacheSize and DUEStats: the disk DUE's cache and counters.
	DUECacheSize int
	DUEStats     due.DiskStats
}

// Published is the latest Snapshot (the zero Snapshot before the splitter
// first published one). Safe for concurrent use.
func (s *Splitter) Published() Snapshot {
	if p := s.snap.Load(); p != nil {
		return *p
	}
	return Snapshot{}
}

// publish takes a Snapshot; on the splitter's goroutine (or while it is
// not running).
func (s *Splitter) publish() {
	p := &Snapshot{Stats: s.stats, DUESwitched: s.dueSwitched}
	if s.due != nil {
		p.DUELen, p.DUEBytes = int64(s.due.Len()), int64(s.due.Bytes())
		if d, ok := s.due.(*due.Disk); ok {
			p.DUEDisk, p.DUECacheSize, p.DUEStats = true, d.CacheSize(), d.Stats()
		}
	}
	s.snap.Store(p)
}
