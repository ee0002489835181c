package peer

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// HTTPTransport sends batches to peers as Arrow IPC streams over HTTP POST
// and serves this node's endpoints.
//
// Every batch is kept in the node's outbox (outbox.go) until its
// receiver's checkpoint covers it: in memory, spilled to disk beyond the
// outbox's share, and saved with the node's checkpoints ([OutboxPart]). A
// peer's queue is sent in order; a batch stays at its head, retried with
// backoff, until the peer acknowledges it (BatchAck). An acknowledged
// batch is kept (with the receiver's incarnation) until the receiver
// reports it durable; when a peer's incarnation changes, the batches the
// old incarnation acknowledged are queued again. A restarted sender
// (Resume) queues its checkpoint's outbox and resends what was not
// acknowledged. Receivers process each (from, epoch, seq) once, so
// resends are harmless.
type HTTPTransport struct {
	self     int
	epoch    atomic.Uint64 // this incarnation; moved past a peer's view of it (moveEpochPast)
	token    string
	topo     Topology
	topoHash string
	greeted  []atomic.Bool // handshake done with peer i, this incarnation
	wasUp    []atomic.Bool // peer i has been up: it answered a hello or sent one
	// known[i] at the handshake with i (what i knew of this node); no
	// batch is sent to i until this node's epoch is past it
	helloKnown []atomic.Uint64
	seenEpoch  []atomic.Uint64 // latest epoch of each peer whose batches were processed
	greetMu    []sync.Mutex
	mismatch   atomic.Bool // a peer's topology differed: the crawl is failing
	firstEpoch uint64      // the epoch this process started with
	stateDir   string
	epochMu    sync.Mutex

	// Endpoint bounds (see docs/peers.md): batch bodies larger than
	// maxBody are refused before they are read, at most sem's capacity
	// are read at once, each within bodyTimeout, and their bytes (thrice,
	// for the decoded copy) are taken from mem, the endpoint's share of
	// the node's memory budget.
	maxBody     int64
	sem         chan struct{}
	bodyTimeout time.Duration
	mem         *bytebudget.Budget
	peers       []string
	tr          *Tracker
	recv        Receiver
	onError     func(error) // a topology mismatch: the crawl is failing
	errConfig   error       // wrapped by topology mismatch errors
	client      *http.Client
	hbClient    *http.Client
	srv         *http.Server
	connMu      sync.Mutex
	fresh       map[net.Conn]struct{} // connections that have not carried a request yet (trackConn)
	ln          net.Listener
	queues      []*peerQueue
	outbox      string
	store       *outStore
	ended       atomic.Bool // the crawl ended and the outbox was let go (Close)
	stop        chan struct{}
	stopOnce    sync.Once
	wg          sync.WaitGroup
	sent        atomic.Uint64
	received    atomic.Uint64
	resent      atomic.Uint64
	loaded      int
	finished    chan struct{}
	finOnce     sync.Once
	finKnown    []atomic.Bool // peer i is known to have decided the crawl is over (see tellFinished)
	started     atomic.Bool   // the node queued its seeds or its checkpoint's batches (Started)
	snapshots   atomic.Uint64 // termination snapshots begun (WatchTermination)
	refused     atomic.Uint64 // requests refused (4xx) or turned away (503), see Refused
	decided     atomic.Bool
	complete    atomic.Bool // the decision covered the whole crawl (see WatchTermination)
	refusing    atomic.Bool // stopping: batches are refused (503) and stay in the senders' outboxes
	idleFn      func() bool
	events      Events
	logf        func(format string, args ...any)

	// Failure detector: peers are polled every hb; one not heard from
	// (status or acknowledgement) for timeout is declared dead. With
	// failover, dead peers leave the live set given to onView.
	timeout  time.Duration
	hb       time.Duration
	failover bool
	onView   func(live []bool)
	peerMu   sync.Mutex
	known    []uint64 // incarnation last heard from each node
	heard    []time.Time
	dead     []bool
}

type peerQueue struct {
	mu    sync.Mutex
	epoch uint64     // the epoch of seq
	seq   uint64     // the last batch id given in epoch (stampLocked)
	items []*outItem // unacknowledged, in send order
	acked []*outItem // acknowledged, not yet durable
	ready chan struct{}
}

// Events is the node's event log as the TCP transport writes to it.
// Implementations are safe for concurrent use.
type Events interface {
	// Write appends e, stamped with the time, node and current epoch.
	Write(e tracefile.Event)
	// SetEpoch stamps later events with epoch (the node moved its epoch).
	SetEpoch(epoch uint64)
}

type noEvents struct{}

func (noEvents) Write(tracefile.Event) {}

func (noEvents) SetEpoch(uint64) {}

// Options configure a node's TCP transport; the recorder builds them from
// its configuration.
type Options struct {
	// Self is this node's id, an index into Peers, every node's
	// host:port.
	Self  int
	Peers []string
	// Listen is the address the node's endpoints bind (Peers[Self] when
	// empty); Listener, when set, is used instead (tests).
	Listen   string
	Listener net.Listener
	// Token is the crawl's bearer token, required on every request.
	Token string
	// Epoch is this node's incarnation; Topology the crawl's, with this
	// node's id.
	Epoch    uint64
	Topology Topology
	// StateDir is the node's state directory, where a moved epoch is
	// saved (SetEpoch); Outbox the directory the outbox spills batch
	// bodies to beyond its share of memory.
	StateDir string
	Outbox   string
	// Part is the outbox's part of the node's checkpoints; with Resume
	// the transport queues what the resumed checkpoint's part loaded
	// (and what an older recorder left in Outbox, a file a batch).
	// Otherwise Outbox is emptied.
	Part   *OutboxPart
	Resume bool
	// PeerTimeout declares a peer dead after that long without an answer
	// (30 s when 0).
	PeerTimeout time.Duration
	// MaxBody is the largest batch body accepted ([MaxBatchBytes]);
	// EndpointMemory the bytes batch bodies being read may take.
	MaxBody        int64
	EndpointMemory int64
	// Failover: dead peers leave the live set given to OnView.
	Failover bool
	OnView   func(live []bool)
	// Tracker counts the batches queued for peers until acknowledged;
	// Receiver processes the batches peers send.
	Tracker  *Tracker
	Receiver Receiver
	// Idle reports whether the node has nothing to fetch (a used page
	// share counts), for NodeStatus.Idle; nil: the tracker alone.
	Idle func() bool
	// Events is the node's event log (nil: none).
	Events Events
	// OnError is told of a topology mismatch, which ends the crawl; such
	// errors wrap ErrConfig.
	OnError   func(error)
	ErrConfig error
}

// NewHTTPTransport starts a node's TCP transport: its endpoints, a
// sender per peer and the failure detector.
func NewHTTPTransport(o Options) (*HTTPTransport, error) {
	listen := o.Listen
	if listen == "" {
		listen = o.Peers[o.Self]
	}
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", listen); err != nil {
			return nil, fmt.Errorf("recorder: listen %s: %w", listen, err)
		}
	}
	n := len(o.Peers)
	timeout := o.PeerTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	events := o.Events
	if events == nil {
		events = noEvents{}
	}
	errConfig := o.ErrConfig
	if errConfig == nil {
		errConfig = errors.New("recorder: bad configuration")
	}
	hb := min(max(timeout/5, 20*time.Millisecond), 2*time.Second)
	t := &HTTPTransport{self: o.Self, token: o.Token, peers: o.Peers, tr: o.Tracker, recv: o.Receiver, ln: ln,
		topo: o.Topology, topoHash: o.Topology.Hash(), greeted: make([]atomic.Bool, n), wasUp: make([]atomic.Bool, n), helloKnown: make([]atomic.Uint64, n), seenEpoch: make([]atomic.Uint64, n), greetMu: make([]sync.Mutex, n),
		stateDir: o.StateDir,
		maxBody:  o.MaxBody, sem: make(chan struct{}, max(2, n)), bodyTimeout: 15 * time.Second,
		mem:      bytebudget.New(o.EndpointMemory),
		client:   &http.Client{Timeout: 10 * time.Second},
		hbClient: &http.Client{Timeout: max(hb, time.Second)},
		outbox:   o.Outbox, stop: make(chan struct{}),
		finished: make(chan struct{}), events: events,
		finKnown: make([]atomic.Bool, n),
		timeout:  timeout, hb: hb, failover: o.Failover, onView: o.OnView, idleFn: o.Idle,
		onError: o.OnError, errConfig: errConfig,
		known: make([]uint64, n), heard: make([]time.Time, n), dead: make([]bool, n),
		logf: func(format string, args ...any) {
			log.Printf("crawltrace: node %d: "+format, append([]any{o.Self}, args...)...)
		}}
	t.epoch.Store(o.Epoch)
	t.firstEpoch = o.Epoch
	t.known[t.self] = o.Epoch
	now := time.Now()
	for i := range t.heard {
		t.heard[i] = now
	}
	for range n {
		t.queues = append(t.queues, &peerQueue{ready: make(chan struct{}, 1)})
	}
	// The outbox keeps up to half the endpoint's memory in memory, taken
	// from the same budget, so the two stay within the endpoint's share.
	outCap, outMem := o.EndpointMemory/2, t.mem
	if o.EndpointMemory <= 0 {
		outCap, outMem = 32<<20, nil
	}
	t.store = newOutStore(t.outbox, outCap, outMem, t.logf)
	if o.Part != nil {
		o.Part.t = t
	}
	if o.Resume {
		if err := t.queueLoaded(o.Part); err != nil {
			return nil, err
		}
	} else if err := os.RemoveAll(t.outbox); err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	if err := os.MkdirAll(t.outbox, 0o755); err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(PathBatch, t.handleBatch)
	mux.HandleFunc(PathStatus, t.handleStatus)
	mux.HandleFunc(PathFinish, t.handleFinish)
	mux.HandleFunc(PathHello, t.handleHello)
	// Every request is read within ReadTimeout (a batch body within
	// bodyTimeout, set per request): a slow body cannot hold a
	// connection.
	t.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: t.bodyTimeout + 10*time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10, ErrorLog: log.New(io.Discard, "", 0), ConnState: t.trackConn}
	go t.srv.Serve(ln)
	for i, q := range t.queues {
		if i != t.self {
			t.wg.Add(1)
			go t.sender(i, q)
		}
	}
	t.wg.Add(1)
	go t.detect()
	return t, nil
}

// Addr is the listener's address.
func (t *HTTPTransport) Addr() string { return t.ln.Addr().String() }

// Drain stops accepting batches (senders keep them for a later start of
// this node) and waits up to d for this node's queues to be acknowledged
// by the live peers. It returns the batches left unacknowledged, which
// stay in the outbox for --resume. A node stopping on a topology mismatch
// tells its peers and does not wait: its peers refuse its batches (or
// stop on the mismatch too), so they stay in the outbox; waiting for them
// held every node of TestPeerHandshakeRefuses the whole d.
func (t *HTTPTransport) Drain(d time.Duration) int {
	t.refusing.Store(true)
	if t.mismatch.Load() {
		t.tellMismatch(max(d, mismatchTell))
		return t.pending()
	}
	deadline := time.Now().Add(d)
	for {
		n := 0
		for i, q := range t.queues {
			if t.failover && t.isDead(i) {
				continue
			}
			q.mu.Lock()
			n += len(q.items)
			q.mu.Unlock()
		}
		if n == 0 || time.Now().After(deadline) {
			return t.pending()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close stops the senders and the failure detector. When the crawl ended
// (every node agreed it is over) the outbox is removed; otherwise the
// batches in it stay for --resume.
func (t *HTTPTransport) Close() error {
	t.stopOnce.Do(func() { close(t.stop) })
	t.wg.Wait()
	t.srv.Close()
	if t.decided.Load() && t.pending() == 0 {
		// The crawl is over: no node will ask for a batch again.
		t.ended.Store(true)
		t.store.close()
		os.RemoveAll(t.outbox)
		return nil
	}
	// What is left is saved with the node's final checkpoint; the spill
	// files are read for it first.
	return nil
}

// Loaded is the number of unacknowledged batches loaded from the outbox a
// previous incarnation left (Options.Resume).
func (t *HTTPTransport) Loaded() int { return t.loaded }

// Refuse makes the endpoint refuse further batches (503): their senders
// keep them in their outboxes. The node is stopping.
func (t *HTTPTransport) Refuse() { t.refusing.Store(true) }

// TransportStats are a transport's counters, this incarnation.
type TransportStats struct {
	// Epoch is this node's current incarnation (moved past a peer's view
	// of it when needed).
	Epoch uint64
	// Sent is the number of batches peers acknowledged; Resent the number
	// of batches sent again (loaded from the outbox, or requeued for a
	// restarted receiver).
	Sent, Resent uint64
	// Refused is the number of requests this node's endpoint refused (a
	// wrong token, topology or node, a stale epoch, a body too large) or
	// turned away for now (503: no free slot or memory, or stopping).
	Refused uint64
}

// Stats is a snapshot of the transport's counters.
func (t *HTTPTransport) Stats() TransportStats {
	return TransportStats{Epoch: t.epoch.Load(), Sent: t.sent.Load(), Resent: t.resent.Load(), Refused: t.refused.Load()}
}

// Logf writes one line to the node's log.
func (t *HTTPTransport) Logf(format string, args ...any) { t.logf(format, args...) }
