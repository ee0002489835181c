// Package splitter is a crawl node's host splitter (Mercator's): every
// URL a fetch worker finds enters it, is logged to the raw URL log with
// the node that owns its host, and is admitted through the DUE into the
// node's frontier or batched for its owner (package peer). With
// fail-over it routes by the consistent ring restricted to the live
// nodes and, when a node is declared dead, routes again every URL its log
// had sent to it (redo). One goroutine owns the URL and page writers, the
// DUE, the splitter cache and the counters, and the splitter saves and
// restores them itself ([Splitter.Parts], [Splitter.CountersPart]) and
// publishes what others read of them ([Splitter.Published], the segments
// [Splitter.Stop] returns); nothing else reaches into them. The splitter
// reaches the node through the interfaces it defines ([Frontier],
// [Redirects], [Events], [Cut]).
package splitter

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// URL is one URL entering the host splitter.
type URL struct {
	URL, Tag, Kind string
}

// Msg is one message to a node's splitter goroutine: a fetched page's
// log row and its outgoing URLs (seeds, links, a redirect), a batch
// received from a peer (answered on reply when set), URLs to hand to
// their current owner without logging them again (forward), or a change
// of the live nodes (view). Workers send a page's whole URL slice in one
// message, so the channel carries pages, not URLs.
type Msg struct {
	Page   *tracefile.PageRecord // the page's log row (nil: none)
	Source uint64                // the page id the URLs came from
	Worker uint16                // the fetch worker that found them
	URLs   []URL
	// Forward holds URLs a worker took from this node's frontier that
	// another node owns now (fail-over).
	Forward []string
	Task    uint64 // the page's in-flight URL, finished once logged
	Bytes   int64  // taken from the splitter's byte budget (see Options.Budget)
	// Logged, when set, is called on the splitter's goroutine once Page
	// is logged (the page's WARC records are queued then, in log order).
	Logged func()

	remote *peer.Batch
	reply  chan bool // remote: true when the batch was new, false when already processed
	view   []bool    // live[i]: node i is alive (fail-over)
	// redo: URLs this node's log had routed to node redoPeer, now dead,
	// to route again (redo.go); redoDone ends that scan.
	redo     []string
	redoPeer int
	redoDone *redoResult
}

// Stats are the splitter's counters, declared once: owned by its
// goroutine, published in its [Snapshot], summed over nodes into
// recorder.Stats (stats.json, the metrics) and saved in checkpoints by
// their JSON names (internal/counters). A counter added here is in all of
// them; it is incremented where it is counted. The JSON names are
// stats.json's.
type Stats struct {
	// URLsLogged counts the URLs logged (every URL a worker found, before
	// any duplicate check), Local and Cross those this node and another
	// node own.
	URLsLogged int64 `json:"urls_logged"`
	Local      int64 `json:"local"`
	Cross      int64 `json:"cross"`
	// The splitter cache (--splitter-cache): cross URLs it sent on, and
	// those it suppressed as sent before.
	SplitterCacheSent       int64 `json:"splitter_cache_sent"`
	SplitterCacheSuppressed int64 `json:"splitter_cache_suppressed"`
	// Batches of URLs sent to peers and the URLs in them; batches
	// received (new ones: a batch sent again is not counted twice) and
	// their URLs.
	BatchesSent     int64 `json:"batches_sent"`
	URLsSent        int64 `json:"urls_sent"`
	BatchesReceived int64 `json:"batches_received"`
	URLsReceived    int64 `json:"urls_received"`
	// URLsAdmitted counts the URLs the node's DUE found new and queued
	// in its frontier, whether logged here or received from a peer (a URL
	// handed over by a peer's frontier at a fail-over is not counted).
	URLsAdmitted int64 `json:"urls_admitted"`
}

// Splitter is a node's host splitter. One goroutine owns the URL and page
// writers, the DUE and the splitter cache; producers send on a bounded
// channel. Every URL is assigned a node by the partitioner and appended to
// the raw URL log before any cache or duplicate check.
type Splitter struct {
	node  int
	epoch uint64 // this node's incarnation, carried in batch ids
	// redirs is the crawl's redirect-hop counts: a redirect target this
	// node will not fetch (another node's, or known to the DUE) is
	// forgotten here, so only queued targets are remembered.
	redirs Redirects
	part   partition.Partitioner
	// ring, when set, is the consistent partitioner over every node id;
	// the splitter routes by ring restricted to the live nodes (fail-over).
	ring   *partition.Consistent
	live   []bool
	owner  atomic.Pointer[partition.Consistent] // the live ring, read by workers
	seeds  []string
	hosts  map[string]struct{} // hosts seen, to report those a fail-over moves
	events Events
	log    *peer.BatchLog
	// durable holds the batch log's watermarks as of the last complete
	// checkpoint (nil: none yet), published by checkpointed.
	durable   atomic.Pointer[[]peer.DurableMark]
	in        chan *Msg
	tr        *peer.Tracker
	transport peer.Transport
	logs      *Logs
	urlw      *tracefile.URLWriter
	pagew     *tracefile.PageWriter
	due       due.Set
	cache     *due.Clock
	front     Frontier
	out       []*peer.Batch
	outBytes  []int    // URL bytes in out[dest]
	seqs      []uint64 // last seq per destination
	inflight  atomic.Int64
	rerouted  int64
	batchSize int
	flushTick time.Duration
	snap      atomic.Pointer[Snapshot] // see Published
	// batchAge: see Options.BatchAge; outSince[d] is when the batch for
	// d being filled got its first URL (zero: none), ageTimer fires when
	// the oldest one is due.
	batchAge time.Duration
	held     int64 // batches being filled that hold counted
	outSince []time.Time
	ageTimer *time.Timer
	now      func() time.Time
	onError  func(error)
	stats    Stats
	stop     chan struct{}
	done     chan struct{}
	err      error
	// ckpt delivers checkpoint cuts.
	ckpt chan Cut
	// newDisk makes the disk DUE the in-memory one gives way to; outDir
	// holds the node's URL log, read back by a redo scan.
	newDisk func() (due.Set, error)
	outDir  string
	// budget bounds the bytes of URL messages from workers (nil: none).
	budget *bytebudget.Budget
	// dueLimit, when positive, is the memory past which the in-memory DUE
	// gives way to the disk DUE (Config.DUE auto); dueSwitched is the
	// number of URLs the DUE held then.
	dueLimit    int
	dueSwitched int64
	// redoRouted counts, per dead peer, the URLs its redo scan routed
	// again so far.
	redoRouted map[int]int64
}

func (s *Splitter) fail(err error) {
	if s.err == nil {
		s.err = err
		if s.onError != nil {
			s.onError(err)
		}
	}
}

// Send hands m to the splitter; the caller counted nothing yet. It
// returns false when the splitter has stopped.
func (s *Splitter) Send(m *Msg) bool {
	s.tr.Add(1)
	s.inflight.Add(1)
	select {
	case s.in <- m:
		return true
	case <-s.done:
		s.inflight.Add(-1)
		s.tr.Add(-1)
		return false
	}
}

// Receive implements peer.Receiver: b is queued for the splitter.
func (s *Splitter) Receive(b *peer.Batch) bool {
	return s.Send(&Msg{remote: b})
}

// ReceiveBatch implements peer.Receiver: it hands b to the splitter and
// waits until it is processed: isNew is false when its id was processed
// before; ok is false when the node no longer accepts batches.
func (s *Splitter) ReceiveBatch(b *peer.Batch) (isNew, ok bool) {
	reply := make(chan bool, 1)
	if !s.Send(&Msg{remote: b, reply: reply}) {
		return false, false
	}
	return <-reply, true
}

// dest is the node owning u: the live ring's owner when fail-over is on,
// the partitioner's otherwise.
func (s *Splitter) dest(u string) int {
	if r := s.owner.Load(); r != nil {
		return r.Node(u)
	}
	return s.part.Node(u)
}

// Run is the splitter's goroutine: it processes messages until Stop.
func (s *Splitter) Run() {
	defer close(s.done)
	tick := time.NewTicker(s.flushTick)
	defer tick.Stop()
	for {
		var aged <-chan time.Time
		if s.ageTimer != nil {
			aged = s.ageTimer.C
		}
		select {
		case m := <-s.in:
			s.handle(m)
		case <-aged:
			s.ageTimer = nil
			s.flushAged()
		case <-tick.C:
			s.flushDue()
			s.publish()
		case c := <-s.ckpt:
			// URLs logged but still in a batch being filled go to the
			// transport now, so the cut finds them in transit.
			s.flushPeers()
			c.Park()
			s.publish()
		case <-s.stop:
			for {
				select {
				case m := <-s.in:
					s.handle(m)
				default:
					s.flushPeers()
					s.closeLogs()
					s.publish()
					return
				}
			}
		}
	}
}

func (s *Splitter) handle(m *Msg) {
	s.process(m)
	s.budget.Release(m.Bytes)
	if len(s.in) == 0 && (s.batchAge <= 0 || s.tr.Count() == s.held+1) {
		// Nothing waits to be processed; with BatchAge, the batches being
		// filled (and m, counted until it is done) are also all the work
		// the node has left, so holding them longer only delays the
		// crawl.
		s.flushPeers()
	}
	s.inflight.Add(-1)
	s.tr.Add(-1)
}

func (s *Splitter) process(m *Msg) {
	if m.Page != nil && s.pagew != nil {
		if err := s.pagew.Append(*m.Page); err != nil {
			s.fail(err)
			s.pagew = nil
		}
	}
	if m.Page != nil && m.Logged != nil {
		m.Logged()
	}
	if len(m.URLs) > 0 {
		t := s.now().UnixNano()
		for i := range m.URLs {
			u := &m.URLs[i]
			dest := s.dest(u.URL)
			if s.hosts != nil {
				s.seeHost(u.URL)
			}
			if s.urlw != nil {
				if _, err := s.urlw.Append(tracefile.URLRecord{Time: t, URL: u.URL, Kind: u.Kind, Tag: u.Tag,
					Source: m.Source, Worker: m.Worker, Dest: uint16(dest)}); err != nil {
					s.fail(err)
					s.urlw = nil
				}
			}
			s.stats.URLsLogged++
			if dest == s.node {
				s.stats.Local++
				if !s.admit(u.URL) && u.Kind == tracefile.URLRedirect {
					s.redirs.Forget(u.URL)
				}
				continue
			}
			if u.Kind == tracefile.URLRedirect {
				s.redirs.Forget(u.URL) // its owner counts hops from zero
			}
			s.stats.Cross++
			if s.cache != nil {
				if s.cache.Access(xxhash.Sum64String(u.URL)) {
					s.stats.SplitterCacheSuppressed++
					continue
				}
				s.stats.SplitterCacheSent++
			}
			s.appendOut(dest, u.URL, u.Kind, m.Source)
		}
	}
	if m.Task != 0 {
		s.front.Finish(m.Task)
	}
	if b := m.remote; b != nil {
		isNew := !s.log.Seen(b.From, b.Epoch, b.Seq)
		if isNew {
			s.log.Record(b.From, b.Epoch, b.Seq)
			s.stats.BatchesReceived++
			s.stats.URLsReceived += int64(len(b.URLs))
			for i, u := range b.URLs {
				if s.hosts != nil {
					s.seeHost(u)
				}
				if i < len(b.Kinds) && b.Kinds[i] == kindForward {
					// Handed over from a peer's frontier: queued even if
					// the DUE knows it, since while views of the live set
					// disagree a URL may come back to a node that admitted
					// it and gave it away.
					s.due.Add(xxhash.Sum64String(u))
					s.tr.Add(1)
					s.front.Add(u)
					continue
				}
				s.admit(u)
			}
		}
		if a, ok := s.transport.(acker); ok {
			a.Processed(s.node, b)
		}
		if m.reply != nil {
			m.reply <- isNew
		}
	}
	if len(m.Forward) > 0 {
		s.route(m.Forward, true)
	}
	if m.view != nil {
		s.changeView(m.view)
	}
	if m.redo != nil {
		s.redone(m.redoPeer, m.redo)
	}
	if m.redoDone != nil {
		s.redoFinished(m.redoDone)
	}
}

// route hands URLs already logged to their current owner: admitted here or
// batched for a peer, past the splitter cache. URLs a worker took from this
// node's own frontier (popped) are in the DUE already; they go back to the
// frontier if this node owns them again.
func (s *Splitter) route(urls []string, popped bool) {
	for _, u := range urls {
		dest := s.dest(u)
		if dest == s.node || dest < 0 {
			if popped {
				s.tr.Add(1)
				s.front.Add(u)
			} else {
				s.admit(u)
			}
			continue
		}
		s.rerouted++
		kind := tracefile.URLLink
		if popped {
			kind = kindForward
		}
		s.appendOut(dest, u, kind, 0)
	}
}

// admit passes a URL this node owns through the DUE into the frontier,
// and reports whether it was new.
func (s *Splitter) admit(u string) bool {
	if s.due.Add(xxhash.Sum64String(u)) {
		s.stats.URLsAdmitted++
		if s.dueLimit > 0 && s.due.Bytes() > s.dueLimit {
			s.dueToDisk()
		}
		s.tr.Add(1)
		s.front.Add(u)
		return true
	}
	return false
}

// dueToDisk moves the in-memory DUE's fingerprints into a disk DUE that
// replaces it.
func (s *Splitter) dueToDisk() {
	s.dueLimit = 0
	d, err := s.newDisk()
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

func (s *Splitter) flushDue() {
	if e, ok := s.due.(interface{ Err() error }); ok && e.Err() != nil {
		s.fail(e.Err())
	}
	if err := s.front.Err(); err != nil {
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

// Checkpointed publishes the batch log's watermarks saved in the last
// checkpoint as durable, once that checkpoint is complete (renamed into
// place; the checkpointer calls it after the commit): receivers report the marks in their status and
// senders then delete the covered batches from their outboxes instead of
// keeping them for a restart of this node.
func (s *Splitter) Checkpointed() {
	if m := s.log.Saved(); m != nil {
		s.durable.Store(m)
	}
}

// Durable implements peer.Receiver: the batch log's watermarks as of the
// last complete checkpoint (nil: none yet).
func (s *Splitter) Durable() []peer.DurableMark {
	if d := s.durable.Load(); d != nil {
		return *d
	}
	return nil
}

var _ peer.Receiver = (*Splitter)(nil)

// URLOverhead is the memory of one queued URL besides its strings: the
// URL value (three string headers) and slice slack.
const URLOverhead = 64

// URLBytes is the memory a slice of URLs holds while queued.
func URLBytes(us []URL) int64 {
	var n int64
	for i := range us {
		n += int64(len(us[i].URL)+len(us[i].Tag)) + URLOverhead
	}
	return n
}
