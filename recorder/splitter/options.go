package splitter

import (
	"time"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// Frontier is the node's frontier as the splitter feeds it. It is called
// on the splitter's goroutine only.
type Frontier interface {
	// Add queues u, a URL this node owns that its DUE admitted (or that
	// a peer handed over). The splitter has counted it in the tracker.
	Add(u string)
	// Finish ends the in-flight URL task: its page and URLs are logged.
	Finish(task uint64)
	// Err is the frontier's first error (its spill store failed), nil
	// while there is none; the splitter fails the crawl with it.
	Err() error
}

// Redirects is the crawl's table of redirect-hop counts as the splitter
// trims it.
type Redirects interface {
	// Forget drops u's hop count: this node will not fetch u (another
	// node owns it, or the DUE knew it).
	Forget(u string)
}

// Events is the node's event log. Implementations are safe for concurrent
// use.
type Events interface {
	// Write appends e (a reassign or redo event), stamped with the time,
	// node and epoch.
	Write(e tracefile.Event)
}

// Cut is a checkpoint's cut as one splitter takes it (see Checkpoint).
type Cut interface {
	// Park is called on the splitter's goroutine once the batches being
	// filled are handed to the transport; it returns when the node's
	// state is saved at the cut. The splitter processes nothing
	// meanwhile, so its DUE, logs and counters can be read.
	Park()
}

// acker is a transport that knows which batches a node has not processed
// yet (peer.MemTransport): the splitter tells it of each one it has.
type acker interface {
	Processed(dest int, b *peer.Batch)
}

// Options configure a node's splitter; the recorder builds them from its
// configuration.
type Options struct {
	// Node is this node's id, Nodes the crawl's node count; Part assigns
	// URLs to nodes.
	Node, Nodes int
	Part        partition.Partitioner
	// Epoch is this node's incarnation, carried in batch ids.
	Epoch uint64
	// Queue is the capacity, in messages, of the splitter's channel.
	Queue int
	// Budget bounds the bytes of URL messages queued for the splitter
	// (nil: no bound): a sender takes a message's Bytes before Send and
	// gives them back when Send fails; the splitter gives them back once
	// it has logged the message. The caller keeps it to send and to read
	// its figures.
	Budget *bytebudget.Budget
	// BatchSize closes a batch for a peer at that many URLs.
	BatchSize int
	// BatchAge, when positive, lets a batch for a peer fill for up to
	// that long (or until BatchSize) before it is handed to the
	// transport; 0 hands every batch over as soon as the splitter has no
	// message waiting. Over TCP each batch is a request and an outbox
	// file, so fuller batches cost less (docs/benchmarks.md, "A crawl
	// over TCP"); a batch being filled counts as work in the tracker and
	// in Inflight, so the node is not idle while it holds one.
	BatchAge time.Duration
	// FlushTick is how often the logs' flush deadlines are checked (200
	// ms when 0).
	FlushTick time.Duration
	// CacheSize is the splitter cache's entries (0: no cache).
	CacheSize int
	// DUE is the duplicate URL eliminator. With DUELimit positive, an
	// in-memory DUE past that many bytes gives way to the one NewDiskDUE
	// makes.
	DUE        due.Set
	DUELimit   int
	NewDiskDUE func() (due.Set, error)
	// Tracker counts outstanding work (a new one when nil); Log is the
	// node's batch log (a new one when nil).
	Tracker *peer.Tracker
	Log     *peer.BatchLog
	// Frontier receives the URLs this node owns; Redirects is trimmed of
	// targets this node will not fetch (none when nil).
	Frontier  Frontier
	Redirects Redirects
	// Events is the node's event log (none when nil).
	Events Events
	// Ring, when set, turns fail-over on: the splitter routes by Ring, a
	// consistent partitioner over every node id, restricted to the live
	// nodes (all of them at first); Seeds are the crawl's, admitted by
	// their new owner when a view change moves them.
	Ring  *partition.Consistent
	Seeds []string
	// Logs are the node's URL and page logs (none when nil: no trace).
	Logs *Logs
	// OutDir is the crawl directory holding the node's URL log, which a
	// redo scan reads.
	OutDir string
	// Now stamps the URL log's rows (time.Now when nil); OnError is told
	// of the first error (a log write failed).
	Now     func() time.Time
	OnError func(error)
}

type noRedirects struct{}

func (noRedirects) Forget(string) {}

type noEvents struct{}

func (noEvents) Write(tracefile.Event) {}

// New returns a node's splitter; Run starts it.
func New(o Options) *Splitter {
	s := &Splitter{node: o.Node, epoch: o.Epoch, budget: o.Budget, logs: o.Logs, part: o.Part, log: o.Log, seqs: make([]uint64, o.Nodes), in: make(chan *Msg, o.Queue), tr: o.Tracker,
		due: o.DUE, front: o.Frontier, out: make([]*peer.Batch, o.Nodes), batchSize: o.BatchSize, batchAge: o.BatchAge,
		flushTick: o.FlushTick, now: o.Now, onError: o.OnError,
		stop: make(chan struct{}), done: make(chan struct{}), ckpt: make(chan Cut), redirs: o.Redirects,
		events: o.Events, newDisk: o.NewDiskDUE, outDir: o.OutDir, dueLimit: o.DUELimit}
	if s.flushTick <= 0 {
		s.flushTick = 200 * time.Millisecond
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = peer.NewBatchLog()
	}
	if s.tr == nil {
		s.tr = peer.NewTracker()
	}
	if s.redirs == nil {
		s.redirs = noRedirects{}
	}
	if s.events == nil {
		s.events = noEvents{}
	}
	if o.CacheSize > 0 {
		s.cache = due.NewClock(o.CacheSize)
	}
	if o.Ring != nil {
		s.ring, s.hosts, s.seeds = o.Ring, make(map[string]struct{}), o.Seeds
		s.live = make([]bool, o.Nodes)
		for i := range s.live {
			s.live[i] = true
		}
		s.owner.Store(o.Ring)
	}
	return s
}

// SetTransport sets the transport batches for peers go to; before Run
// (or the first Handle). It is not an Option because a transport is made
// after the splitter: it delivers to the splitter (a peer.Receiver), and
// a TCP transport loads its outbox from the checkpoint the splitter's
// parts are restored from.
func (s *Splitter) SetTransport(t peer.Transport) { s.transport = t }

// SendView hands the splitter a new set of live nodes (fail-over):
// live[i] is true when node i is alive.
func (s *Splitter) SendView(live []bool) bool { return s.Send(&Msg{view: live}) }

// OwnerOf is the node that owns u now with fail-over (the live ring's),
// and ok false without fail-over: fetch workers ask it of every URL they
// take, to forward those a view change moved. Safe for concurrent use.
func (s *Splitter) OwnerOf(u string) (node int, ok bool) {
	if r := s.owner.Load(); r != nil {
		return r.Node(u), true
	}
	return 0, false
}

// Inflight is the number of messages sent to the splitter and not yet
// processed, plus the batches for peers being filled when
// Options.BatchAge holds them: zero when the splitter has no work, which
// a node's idleness (termination detection) and its drain at a stop
// wait for. Safe for concurrent use.
func (s *Splitter) Inflight() int64 { return s.inflight.Load() }

// Stop ends Run once the messages already sent are processed, the last
// batches handed to the transport and the logs closed, and waits for it.
// It returns the logs' segments, for the manifest: a log whose write
// failed was dropped then, and its segments are not listed.
func (s *Splitter) Stop() Segments {
	close(s.stop)
	<-s.done
	return s.segments()
}

// Checkpoint hands c to the splitter, which parks at it between two
// messages (see Cut). It waits until the splitter takes c.
func (s *Splitter) Checkpoint(c Cut) { s.ckpt <- c }
