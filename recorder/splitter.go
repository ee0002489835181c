package recorder

import (
	"fmt"
	"io"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// splitURL is one URL entering the host splitter.
type splitURL struct {
	URL, Tag, Kind string
}

// splitMsg is one message to a node's splitter goroutine: a fetched page's
// log row and its outgoing URLs (seeds, links, a redirect), or a batch
// received from a peer. Workers send a page's whole URL slice in one
// message, so the channel carries pages, not URLs.
type splitMsg struct {
	page   *tracefile.PageRecord
	source uint64
	worker uint16
	urls   []splitURL
	remote *Batch
	task   uint64 // the page's in-flight URL, finished once logged
	bytes  int64  // taken from the splitter's byte budget
}

// splitStats are the splitter's counters, owned by its goroutine and read
// after it stops.
type splitStats struct {
	Logged, Local, Cross       int64
	CacheSuppressed, CacheSent int64
	BatchesSent, URLsSent      int64
	Received, ReceivedBatches  int64
	Admitted                   int64
}

// splitter is a node's host splitter. One goroutine owns the URL and page
// writers, the DUE and the splitter cache; producers send on a bounded
// channel. Every URL is assigned a node by the partitioner and appended to
// the raw URL log before any cache or duplicate check.
type splitter struct {
	node      int
	part      partition.Partitioner
	in        chan *splitMsg
	tr        *tracker
	transport Transport
	urlw      *tracefile.URLWriter
	pagew     *tracefile.PageWriter
	due       due.Set
	cache     *clockCache
	front     *frontier
	out       []*Batch
	seq       uint64
	batchSize int
	flushTick time.Duration
	now       func() time.Time
	onError   func(error)
	stats     splitStats
	stop      chan struct{}
	done      chan struct{}
	err       error
	// ckpt delivers checkpoint cuts; owner is the node whose state the
	// splitter saves at one.
	ckpt  chan *barrier
	owner *node
	// budget bounds the bytes of URL messages from workers (nil: none).
	budget *byteBudget
	// dueLimit, when positive, is the memory past which the in-memory DUE
	// gives way to the disk DUE (Config.DUE auto); dueSwitched is the
	// number of URLs the DUE held then.
	dueLimit    int
	dueSwitched int64
}

func (s *splitter) fail(err error) {
	if s.err == nil {
		s.err = err
		if s.onError != nil {
			s.onError(err)
		}
	}
}

// send hands m to the splitter; the caller counted nothing yet.
func (s *splitter) send(m *splitMsg) bool {
	s.tr.add(1)
	select {
	case s.in <- m:
		return true
	case <-s.done:
		s.tr.add(-1)
		return false
	}
}

// receive implements receiver for batches from peers.
func (s *splitter) receive(b *Batch) bool {
	return s.send(&splitMsg{remote: b})
}

func (s *splitter) run() {
	defer close(s.done)
	tick := time.NewTicker(s.flushTick)
	defer tick.Stop()
	for {
		select {
		case m := <-s.in:
			s.handle(m)
		case <-tick.C:
			s.flushDue()
		case b := <-s.ckpt:
			b.park(s.owner)
		case <-s.stop:
			for {
				select {
				case m := <-s.in:
					s.handle(m)
				default:
					s.closeWriters()
					return
				}
			}
		}
	}
}

func (s *splitter) handle(m *splitMsg) {
	s.process(m)
	s.budget.release(m.bytes)
	if len(s.in) == 0 {
		s.flushPeers()
	}
	s.tr.add(-1)
}

func (s *splitter) process(m *splitMsg) {
	if m.page != nil && s.pagew != nil {
		if err := s.pagew.Append(*m.page); err != nil {
			s.fail(err)
			s.pagew = nil
		}
	}
	if len(m.urls) > 0 {
		t := s.now().UnixNano()
		for i := range m.urls {
			u := &m.urls[i]
			dest := s.part.Node(u.URL)
			if s.urlw != nil {
				if _, err := s.urlw.Append(tracefile.URLRecord{Time: t, URL: u.URL, Kind: u.Kind, Tag: u.Tag,
					Source: m.source, Worker: m.worker, Dest: uint16(dest)}); err != nil {
					s.fail(err)
					s.urlw = nil
				}
			}
			s.stats.Logged++
			if dest == s.node {
				s.stats.Local++
				s.admit(u.URL)
				continue
			}
			s.stats.Cross++
			if s.cache != nil {
				if s.cache.access(xxhash.Sum64String(u.URL)) {
					s.stats.CacheSuppressed++
					continue
				}
				s.stats.CacheSent++
			}
			b := s.out[dest]
			if b == nil {
				b = &Batch{From: s.node}
				s.out[dest] = b
			}
			b.URLs = append(b.URLs, u.URL)
			b.Kinds = append(b.Kinds, u.Kind)
			b.Source = append(b.Source, m.source)
			if len(b.URLs) >= s.batchSize {
				s.flushPeer(dest)
			}
		}
	}
	if m.task != 0 {
		s.front.finish(m.task)
	}
	if m.remote != nil {
		s.stats.ReceivedBatches++
		s.stats.Received += int64(len(m.remote.URLs))
		for _, u := range m.remote.URLs {
			s.admit(u)
		}
		if a, ok := s.transport.(batchAcker); ok {
			a.processed(s.node, m.remote)
		}
	}
}

// admit passes a URL this node owns through the DUE into the frontier.
func (s *splitter) admit(u string) {
	if s.due.Add(xxhash.Sum64String(u)) {
		s.stats.Admitted++
		if s.dueLimit > 0 && s.due.Bytes() > s.dueLimit {
			s.dueToDisk()
		}
		s.tr.add(1)
		s.front.add(u)
	}
}

// dueToDisk moves the in-memory DUE's fingerprints into a disk DUE that
// replaces it.
func (s *splitter) dueToDisk() {
	s.dueLimit = 0
	d, err := newDiskDUE(s.owner.cfg, s.node)
	if err != nil {
		s.fail(err)
		return
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.due.Save(pw)) }()
	if err := d.Load(pr); err != nil {
		pr.CloseWithError(err)
		d.Close()
		s.fail(fmt.Errorf("recorder: node %d: moving the DUE to disk: %w", s.node, err))
		return
	}
	s.dueSwitched = int64(s.due.Len())
	s.due.Close()
	s.due = d
}

func (s *splitter) flushPeer(dest int) {
	b := s.out[dest]
	if b == nil || len(b.URLs) == 0 {
		return
	}
	s.out[dest] = nil
	s.seq++
	b.Seq = s.seq
	s.stats.BatchesSent++
	s.stats.URLsSent += int64(len(b.URLs))
	s.transport.Send(dest, b)
}

func (s *splitter) flushPeers() {
	for d := range s.out {
		s.flushPeer(d)
	}
}

func (s *splitter) flushDue() {
	if e, ok := s.due.(interface{ Err() error }); ok && e.Err() != nil {
		s.fail(e.Err())
	}
	if err := s.front.err(); err != nil {
		s.fail(err)
	}
	now := time.Now()
	if s.urlw != nil {
		if err := s.urlw.FlushIfDue(now); err != nil {
			s.fail(err)
			s.urlw = nil
		}
	}
	if s.pagew != nil {
		if err := s.pagew.FlushIfDue(now); err != nil {
			s.fail(err)
			s.pagew = nil
		}
	}
}

func (s *splitter) closeWriters() {
	if s.urlw != nil {
		if err := s.urlw.Close(); err != nil {
			s.fail(err)
		}
	}
	if s.pagew != nil {
		if err := s.pagew.Close(); err != nil {
			s.fail(err)
		}
	}
}
