package peer

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// HTTP endpoints of a node in TCP mode. Every request carries
// "Authorization: Bearer TOKEN"; without it the node answers 401. Batch
// posts also carry HeaderEpoch, the sending process's incarnation.
const (
	PathBatch  = "/v1/batch"  // POST one Batch (BatchContentType); answers a BatchAck
	PathStatus = "/v1/status" // GET NodeStatus as JSON (also the failure detector's heartbeat)
	PathFinish = "/v1/finish" // POST: a node observed global termination
	// PathHello is the handshake: POST this node's Hello (JSON); the peer
	// answers its own, 200 when the topologies agree, 412 when not.
	PathHello = "/v1/hello"
)

// Peer request headers besides the token. HeaderTopology carries the
// sender's [Topology.Hash] on every request (a batch or finish without it,
// or with another, is refused with 412); HeaderTo the node id the request
// is meant for (another is refused with 421). A 409 answer to a batch
// carries HeaderEpochCurrent, the receiver's view of the sender's epoch.
const (
	HeaderTopology     = "Crawltrace-Topology"
	HeaderTo           = "Crawltrace-To"
	HeaderEpochCurrent = "Crawltrace-Epoch-Current"
)

// Hello is the peer handshake's message, both ways: the node, its
// incarnation, its topology, and (in answers) Known, the incarnation of
// the asking node the answering one last heard of (0: none). A node
// that learns it is not ahead of what a peer knows of it moves its epoch
// past it before sending that peer anything.
type Hello struct {
	Node  int    `json:"node"`
	Epoch uint64 `json:"epoch"`
	Known uint64 `json:"known,omitempty"`
	// Seen (in answers) is the latest epoch of the asking node whose
	// batches the answering one processed since it started: the asking
	// node greets before its first batch, so a Seen at or past its own
	// epoch means another copy of it used that epoch.
	Seen     uint64   `json:"seen,omitempty"`
	Topology Topology `json:"topology"`
}

// maxEpoch bounds the epochs a node accepts from peers: a claim above it
// is refused (400), so a forged one cannot drive a node's epoch to
// overflow.
const maxEpoch = 1 << 48

// HeaderEpoch carries the sender's current incarnation on PathBatch. A
// receiver that has heard a newer incarnation of that node refuses the
// batch with 409 (a stale epoch: an old process still running).
const HeaderEpoch = "Crawltrace-Epoch"

// BatchAck is a receiver's answer (200, JSON) to a batch it processed,
// now or before.
type BatchAck struct {
	Node  int    `json:"node"`
	Epoch uint64 `json:"epoch"` // the receiver's incarnation
	New   bool   `json:"new"`   // false: the batch id was processed before
	// Durable: the receiver's checkpoint already covers the batch, so the
	// sender may delete it from its outbox at once. Receivers answer false
	// (a batch just processed is never in a checkpoint yet); senders keep
	// acknowledged batches until the receiver's status lists them in
	// NodeStatus.Durable (after its next checkpoint) or the crawl ends,
	// and resend them to a new incarnation of the receiver, which lost
	// what it admitted after its last checkpoint.
	Durable bool `json:"durable"`
}

// NodeStatus is a node's answer on PathStatus.
type NodeStatus struct {
	Node     int    `json:"node"`
	Epoch    uint64 `json:"epoch"`    // this incarnation
	Idle     bool   `json:"idle"`     // nothing to fetch (or page share used), no fetch in flight, nothing queued for peers
	Sent     uint64 `json:"sent"`     // batches acknowledged by peers, this incarnation
	Received uint64 `json:"received"` // distinct batches processed, this incarnation
	Finished bool   `json:"finished"` // the node decided the crawl is over
	// Drained: nothing left at all, not even URLs held back by a used
	// page share (Idle is also true for those).
	Drained bool `json:"drained,omitempty"`
	// Complete: the crawl is over for every node of it, none declared
	// dead and none holding URLs back; set with Finished (see
	// WatchTermination).
	Complete bool `json:"complete,omitempty"`
	// Peers is this node's view: the incarnation it last heard from each
	// node (0: none yet), itself included; Dead lists the nodes its
	// failure detector declared dead.
	Peers  []uint64 `json:"peers"`
	Dead   []int    `json:"dead,omitempty"`
	Outbox int      `json:"outbox"` // batches queued for peers, not yet acknowledged
	// Queued is Outbox by receiver: the batches queued for each node.
	Queued []int `json:"queued,omitempty"`
	// Durable lists, per sending incarnation, the batches this node's last
	// checkpoint covers; senders delete those from their outboxes. Empty
	// until the node has written a checkpoint.
	Durable []DurableMark `json:"durable,omitempty"`
	// Topology is the node's [Topology.Hash]; a poller with another stops.
	Topology string `json:"topology,omitempty"`
}

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

// BatchSoftBytes bounds a batch's size: a splitter closes a batch for a
// peer once its URLs take BatchSoftBytes (or its batch size in URLs); a
// receiver refuses a body larger than [MaxBatchBytes].
const BatchSoftBytes = 2 << 20

// WireURLOverhead is what one URL adds to a batch on the wire besides its
// bytes: the url and kind offsets, the kind, the source id, with slack.
const WireURLOverhead = 32

// MaxBatchBytes is the largest batch body a node accepts: a full batch of
// batchURLs URLs plus one URL of the longest length the URL filter lets
// through (maxURLLength; a page's body size, maxBodyBytes, when it has no
// limit) and the Arrow framing.
func MaxBatchBytes(maxURLLength int, maxBodyBytes int64, batchURLs int) int64 {
	url := int64(maxURLLength)
	if url <= 0 {
		url = max(maxBodyBytes, 64<<10)
	}
	n := max(batchURLs, 1)
	return min(int64(n)*(url+WireURLOverhead), BatchSoftBytes) + url + WireURLOverhead + 1<<20
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
func (noEvents) SetEpoch(uint64)       {}

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
		topo: o.Topology, topoHash: o.Topology.Hash(), greeted: make([]atomic.Bool, n), helloKnown: make([]atomic.Uint64, n), seenEpoch: make([]atomic.Uint64, n), greetMu: make([]sync.Mutex, n),
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
		IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10, ErrorLog: log.New(io.Discard, "", 0)}
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

func (t *HTTPTransport) authorized(r *http.Request) bool {
	want := "Bearer " + t.token
	got := r.Header.Get("Authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// refuse answers a bad request with code and msg, and logs one line.
func (t *HTTPTransport) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	t.refused.Add(1)
	t.logf("refused %s %s from %s: %d %s", r.Method, r.URL.Path, r.RemoteAddr, code, msg)
	// The connection closes after the answer: the server would otherwise
	// read the unread body first, as slowly as the client sends it.
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// admitPost refuses a request without the crawl's token, or not a POST.
func (t *HTTPTransport) admitPost(w http.ResponseWriter, r *http.Request) bool {
	if !t.authorized(r) {
		t.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
		return false
	}
	if r.Method != http.MethodPost {
		t.refuse(w, r, http.StatusMethodNotAllowed, "POST only")
		return false
	}
	return true
}

func (t *HTTPTransport) handleBatch(w http.ResponseWriter, r *http.Request) {
	if !t.admitPost(w, r) {
		return
	}
	if !t.checkPeerHeaders(w, r, true) {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != BatchContentType {
		t.refuse(w, r, http.StatusUnsupportedMediaType, "want "+BatchContentType)
		return
	}
	sender, err := strconv.ParseUint(r.Header.Get(HeaderEpoch), 10, 64)
	if err != nil || sender == 0 || sender > maxEpoch {
		t.refuse(w, r, http.StatusBadRequest, "missing or bad "+HeaderEpoch+" header")
		return
	}
	// Bounds before a byte of the body is read: its declared size, a
	// free slot, and memory for it and its decoded copy.
	switch {
	case r.ContentLength < 0:
		t.refuse(w, r, http.StatusLengthRequired, "a batch needs a Content-Length")
		return
	case r.ContentLength > t.maxBody:
		t.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("batch of %d bytes, the limit is %d", r.ContentLength, t.maxBody))
		return
	}
	select {
	case t.sem <- struct{}{}:
		defer func() { <-t.sem }()
	default:
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		t.refused.Add(1)
		http.Error(w, "too many batches in flight", http.StatusServiceUnavailable)
		return
	}
	need := 3 * r.ContentLength
	if !t.mem.TryAcquire(need) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		t.refused.Add(1)
		http.Error(w, "batch memory in use", http.StatusServiceUnavailable)
		return
	}
	defer t.mem.Release(need)
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(t.bodyTimeout))
	b, err := DecodeBatch(http.MaxBytesReader(w, r.Body, r.ContentLength))
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		t.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if b.From < 0 || b.From >= len(t.peers) || b.From == t.self {
		t.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("batch from node %d: not a peer", b.From))
		return
	}
	if b.Epoch == 0 || b.Epoch > sender {
		t.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("batch epoch %d of node %d: want 1..%d", b.Epoch, b.From, sender))
		return
	}
	if cur := t.observe(b.From, sender); sender < cur {
		w.Header().Set(HeaderEpochCurrent, strconv.FormatUint(cur, 10))
		t.refuse(w, r, http.StatusConflict, fmt.Sprintf("stale epoch %d of node %d (current %d)", sender, b.From, cur))
		return
	}
	if t.refusing.Load() {
		t.refused.Add(1)
		http.Error(w, "node stopping", http.StatusServiceUnavailable)
		return
	}
	isNew, ok := t.recv.ReceiveBatch(b)
	if !ok {
		t.refused.Add(1)
		http.Error(w, "node stopping", http.StatusServiceUnavailable)
		return
	}
	if isNew {
		t.received.Add(1)
	}
	for seen := &t.seenEpoch[b.From]; ; {
		if cur := seen.Load(); b.Epoch <= cur || seen.CompareAndSwap(cur, b.Epoch) {
			break
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(BatchAck{Node: t.self, Epoch: t.epoch.Load(), New: isNew})
}

// checkPeerHeaders refuses a request whose topology hash is not this
// node's (412; with a hash that differs the crawl stops, see failTopology)
// or that is meant for another node (421). Without need, a request with
// neither header passes (a status poll by a monitor).
func (t *HTTPTransport) checkPeerHeaders(w http.ResponseWriter, r *http.Request, need bool) bool {
	h, to := r.Header.Get(HeaderTopology), r.Header.Get(HeaderTo)
	if !need && h == "" && to == "" {
		return true
	}
	if h != t.topoHash {
		msg := fmt.Sprintf("topology %q, this node's is %q (node %d of crawl %q): nodes of one crawl must be given the same --crawl-id, --peers (same order), --partitioner, --replicas and --politeness-key",
			h, t.topoHash, t.self, t.topo.CrawlID)
		t.refuse(w, r, http.StatusPreconditionFailed, msg)
		if h != "" {
			t.failTopology(fmt.Errorf("%w: %s %s from %s: %s", t.errConfig, r.Method, r.URL.Path, r.RemoteAddr, msg))
		}
		return false
	}
	if to != strconv.Itoa(t.self) {
		t.refuse(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("request for node %q reached node %d (%s)", to, t.self, t.peers[t.self]))
		return false
	}
	return true
}

// failTopology stops the crawl on a topology mismatch: the error goes to
// this node's log and ends the crawl with ErrConfig (exit status 2).
func (t *HTTPTransport) failTopology(err error) {
	if t.mismatch.Swap(true) {
		return
	}
	t.logf("%v", err)
	if t.onError != nil {
		t.onError(err)
	}
}

// handleHello is the handshake's receiving side: it answers this node's
// Hello, 200 when the asking node's topology agrees and 412 (and the crawl
// stops) when it does not.
func (t *HTTPTransport) handleHello(w http.ResponseWriter, r *http.Request) {
	if !t.admitPost(w, r) {
		return
	}
	var h Hello
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&h); err != nil {
		t.refuse(w, r, http.StatusBadRequest, "bad hello: "+err.Error())
		return
	}
	if h.Node < 0 || h.Node >= len(t.peers) || h.Node == t.self || h.Epoch == 0 || h.Epoch > maxEpoch {
		t.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("hello from node %d epoch %d: not a peer of node %d", h.Node, h.Epoch, t.self))
		return
	}
	t.peerMu.Lock()
	known := t.known[h.Node]
	t.peerMu.Unlock()
	reply := Hello{Node: t.self, Epoch: t.epoch.Load(), Known: known, Seen: t.seenEpoch[h.Node].Load(), Topology: t.topo}
	w.Header().Set("Content-Type", "application/json")
	diff := t.topo.peerDiff(h.Topology)
	if to := r.Header.Get(HeaderTo); to != strconv.Itoa(t.self) {
		diff = append(diff, fmt.Sprintf("node %d sent its hello for node %s to %s, which is node %d", h.Node, to, t.peers[t.self], t.self))
	}
	if h.Topology.NodeID != h.Node {
		diff = append(diff, fmt.Sprintf("hello from node %d carries the topology of node %d", h.Node, h.Topology.NodeID))
	}
	if len(diff) > 0 {
		t.failTopology(fmt.Errorf("%w: peer handshake: node %d (%s) does not agree with node %d on the crawl's topology: %s",
			t.errConfig, h.Node, r.RemoteAddr, t.self, strings.Join(diff, "; ")))
		w.WriteHeader(http.StatusPreconditionFailed)
		json.NewEncoder(w).Encode(reply)
		return
	}
	json.NewEncoder(w).Encode(reply)
}

// greet is the handshake's asking side: it sends this node's Hello to
// peer i and checks the answer. A topology that differs, or an answer
// from another node than i, stops the crawl (errTopology); a peer that
// knows an epoch of this node at least as new as its own moves this
// node's epoch past it. Other errors (the peer is down) are returned to
// be retried.
func (t *HTTPTransport) greet(i int) error {
	if t.greeted[i].Load() {
		return nil
	}
	// One handshake with a peer at a time: a second one, answered after
	// the first let batches through, would read them as another copy's.
	t.greetMu[i].Lock()
	defer t.greetMu[i].Unlock()
	if t.greeted[i].Load() {
		return nil
	}
	body, _ := json.Marshal(Hello{Node: t.self, Epoch: t.epoch.Load(), Topology: t.topo})
	req, err := http.NewRequest(http.MethodPost, "http://"+t.peers[i]+PathHello, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderTo, strconv.Itoa(i))
	req.Header.Set(HeaderTopology, t.topoHash)
	resp, err := t.hbClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPreconditionFailed {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("recorder: hello to node %d (%s): %s: %s", i, t.peers[i], resp.Status, strings.TrimSpace(string(msg)))
	}
	var h Hello
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
		return fmt.Errorf("recorder: hello to node %d (%s): bad answer: %v", i, t.peers[i], err)
	}
	diff := t.topo.peerDiff(h.Topology)
	if h.Node != i {
		diff = append(diff, fmt.Sprintf("%s is node %d's address here, but answers as node %d", t.peers[i], i, h.Node))
	}
	if resp.StatusCode == http.StatusPreconditionFailed && len(diff) == 0 {
		diff = append(diff, "it refused this node's hello")
	}
	if len(diff) > 0 {
		err := fmt.Errorf("%w: peer handshake: node %d (%s) does not agree with node %d on the crawl's topology: %s",
			t.errConfig, i, t.peers[i], t.self, strings.Join(diff, "; "))
		t.failTopology(err)
		return errTopology
	}
	if h.Epoch > 0 && h.Epoch <= maxEpoch {
		t.observe(i, h.Epoch)
	}
	// A peer that heard of a later epoch of this node, or processed
	// batches of this epoch that this node never sent it, knows another
	// copy of it: move past, and renumber what is queued for the peer.
	mine := t.epoch.Load()
	if h.Known > mine || (h.Seen >= mine && h.Seen <= maxEpoch) {
		view := max(h.Known, h.Seen)
		t.moveEpochPast(view, fmt.Sprintf("node %d knows epoch %d and processed batches of epoch %d of this node", i, h.Known, h.Seen))
		t.restamp(i, view)
	}
	t.greeted[i].Store(true)
	return nil
}

// errTopology is greet's answer when the peer's topology differs.
var errTopology = errors.New("recorder: topology mismatch")

// moveEpochPast makes this node a new incarnation, numbered view+1, when a
// peer's view of it (view) is not behind its own epoch: a node restored
// from an older copy of its state directory, or named in a forged batch
// claiming a later epoch, would otherwise have its batches refused as
// stale (409) for ever. The new epoch is saved before it is used.
func (t *HTTPTransport) moveEpochPast(view uint64, why string) {
	if view > maxEpoch {
		return
	}
	t.epochMu.Lock()
	defer t.epochMu.Unlock()
	old := t.epoch.Load()
	if view < old {
		return
	}
	next := view + 1
	if t.stateDir != "" {
		if err := SetEpoch(t.stateDir, next); err != nil {
			t.logf("moving past epoch %d: %v", view, err)
			return
		}
	}
	t.epoch.Store(next)
	t.peerMu.Lock()
	t.known[t.self] = next
	t.peerMu.Unlock()
	t.events.SetEpoch(next)
	t.events.Write(tracefile.Event{Event: tracefile.EventEpoch, PeerEpoch: view, Reason: why})
	t.logf("epoch %d is behind its peers' view (%s): now epoch %d", old, why, next)
}

// restamp gives new ids, in this node's current epoch, to the batches
// queued for peer i that this incarnation made in an epoch i may have
// seen used by another copy of this node (at most known): i would take
// them for that copy's batches and drop them. Called at the handshake,
// before anything is sent to i.
func (t *HTTPTransport) restamp(i int, known uint64) {
	q := t.queues[i]
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, it := range q.items {
		if it.epoch < t.firstEpoch || it.epoch > known {
			continue
		}
		b := t.itemBatch(it)
		if b == nil {
			continue
		}
		t.stampLocked(q, b)
		body, err := encodeBatchBytes(b)
		if err != nil {
			t.logf("outbox: batch e%d s%d: %v", it.epoch, it.seq, err)
			continue
		}
		t.store.drop(it)
		it.epoch, it.seq = b.Epoch, b.Seq
		t.store.hold(it, body)
		n++
	}
	if n > 0 {
		t.logf("%d batches for node %d renumbered in epoch %d (node %d knew epoch %d of this node)", n, i, t.epoch.Load(), i, known)
	}
}

// stampLocked gives b the next id of q's sequence in the current epoch
// (a new epoch starts at 1). The transport numbers a node's batches, so
// that a node that moves its epoch (moveEpochPast) starts the new one at
// 1, as receivers' batch logs expect.
func (t *HTTPTransport) stampLocked(q *peerQueue, b *Batch) {
	e := t.epoch.Load()
	if q.epoch != e {
		q.epoch, q.seq = e, 0
	}
	q.seq++
	b.From, b.Epoch, b.Seq = t.self, e, q.seq
}

// observe records that peer answered in incarnation epoch and returns the
// newest incarnation known of it. A newer incarnation means the peer
// restarted: what its old incarnation acknowledged is queued again. A
// peer declared dead that answers comes back.
func (t *HTTPTransport) observe(peer int, epoch uint64) uint64 {
	t.peerMu.Lock()
	cur := t.known[peer]
	if epoch < cur {
		t.peerMu.Unlock()
		return cur
	}
	t.heard[peer] = time.Now()
	restarted := cur != 0 && epoch > cur
	t.known[peer] = epoch
	back := t.dead[peer]
	var live []bool
	if back {
		t.dead[peer] = false
		live = t.liveLocked()
	}
	t.peerMu.Unlock()
	if restarted {
		t.requeueAcked(peer, epoch)
	}
	if back {
		p := peer
		t.events.Write(tracefile.Event{Event: tracefile.EventPeerBack, Peer: &p, PeerEpoch: epoch})
		t.logf("peer %d is back (epoch %d)", peer, epoch)
		if t.failover && t.onView != nil {
			t.onView(live)
		}
	}
	return epoch
}

func (t *HTTPTransport) liveLocked() []bool {
	live := make([]bool, len(t.dead))
	for i, d := range t.dead {
		live[i] = !d
	}
	return live
}

// requeueAcked queues again, ahead of the rest, the batches for peer that
// an incarnation older than epoch acknowledged.
func (t *HTTPTransport) requeueAcked(peer int, epoch uint64) {
	q := t.queues[peer]
	q.mu.Lock()
	var again, keep []*outItem
	for _, it := range q.acked {
		if it.ackedBy < epoch {
			again = append(again, it)
		} else {
			keep = append(keep, it)
		}
	}
	q.acked = keep
	q.items = append(again, q.items...)
	q.mu.Unlock()
	if len(again) > 0 {
		t.tr.Add(int64(len(again)))
		t.resent.Add(uint64(len(again)))
		t.logf("peer %d restarted (epoch %d): resending %d acknowledged batches", peer, epoch, len(again))
	}
	t.wake(q)
}

func (t *HTTPTransport) wake(q *peerQueue) {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (t *HTTPTransport) status() NodeStatus {
	fin := false
	select {
	case <-t.finished:
		fin = true
	default:
	}
	started := t.started.Load()
	s := NodeStatus{Node: t.self, Epoch: t.epoch.Load(), Topology: t.topoHash, Idle: t.idle(),
		Sent: t.sent.Load(), Received: t.received.Load(), Finished: fin || t.decided.Load(),
		Drained: started && t.tr.Idle(), Queued: make([]int, len(t.queues))}
	for i, q := range t.queues {
		q.mu.Lock()
		s.Queued[i] = len(q.items)
		q.mu.Unlock()
		s.Outbox += s.Queued[i]
	}
	s.Complete = s.Finished && t.complete.Load()
	if t.recv != nil {
		s.Durable = t.recv.Durable()
	}
	t.peerMu.Lock()
	s.Peers = slices.Clone(t.known)
	for i, d := range t.dead {
		if d {
			s.Dead = append(s.Dead, i)
		}
	}
	t.peerMu.Unlock()
	return s
}

// pending is the number of batches queued for peers, not yet acknowledged.
func (t *HTTPTransport) pending() int {
	n := 0
	for _, q := range t.queues {
		q.mu.Lock()
		n += len(q.items)
		q.mu.Unlock()
	}
	return n
}

func (t *HTTPTransport) handleStatus(w http.ResponseWriter, r *http.Request) {
	if !t.authorized(r) {
		t.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	if !t.checkPeerHeaders(w, r, false) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(t.status())
}

// Send puts b in the outbox and queues it for peer dest; it never blocks
// on the network or the disk (but for a spill beyond the outbox's share
// of memory).
func (t *HTTPTransport) Send(dest int, b *Batch) {
	t.tr.Add(1)
	q := t.queues[dest]
	q.mu.Lock()
	defer t.wake(q)
	defer q.mu.Unlock()
	t.stampLocked(q, b)
	it := &outItem{epoch: b.Epoch, seq: b.Seq}
	body, err := encodeBatchBytes(b)
	if err != nil {
		// A batch of strings and numbers always encodes; should it not,
		// its URLs are still in the node's URL log.
		t.logf("outbox: batch e%d s%d for node %d: %v (not sent)", b.Epoch, b.Seq, dest, err)
		t.tr.Add(-1)
		return
	}
	t.store.hold(it, body)
	q.items = append(q.items, it)
}

// Take removes and returns every batch held for dest (declared dead):
// unacknowledged ones and those its incarnations acknowledged. Their
// outbox files are deleted; the caller routes their URLs anew.
func (t *HTTPTransport) Take(dest int) ([]*Batch, int) {
	q := t.queues[dest]
	q.mu.Lock()
	defer q.mu.Unlock()
	items, acked := q.items, q.acked
	q.items, q.acked = nil, nil
	var out []*Batch
	for _, it := range append(items, acked...) {
		if b := t.itemBatch(it); b != nil {
			out = append(out, b)
		}
		t.store.drop(it)
	}
	return out, len(items)
}

// forgetDurable deletes the acknowledged batches for peer that its
// checkpoint covers (marks from its status).
func (t *HTTPTransport) forgetDurable(peer int, marks []DurableMark) {
	through := map[uint64]uint64{}
	for _, m := range marks {
		if m.From == t.self {
			through[m.Epoch] = m.Through
		}
	}
	if len(through) == 0 {
		return
	}
	q := t.queues[peer]
	q.mu.Lock()
	defer q.mu.Unlock()
	keep := q.acked[:0]
	for _, it := range q.acked {
		if it.seq <= through[it.epoch] {
			t.store.drop(it)
		} else {
			keep = append(keep, it)
		}
	}
	clear(q.acked[len(keep):])
	q.acked = keep
}

func (t *HTTPTransport) isDead(i int) bool {
	t.peerMu.Lock()
	defer t.peerMu.Unlock()
	return t.dead[i]
}

func (t *HTTPTransport) sender(dest int, q *peerQueue) {
	defer t.wg.Done()
	backoff := 50 * time.Millisecond
	for {
		q.mu.Lock()
		var it *outItem
		if len(q.items) > 0 {
			it = q.items[0]
		}
		q.mu.Unlock()
		if it == nil {
			select {
			case <-t.stop:
				return
			case <-q.ready:
				continue
			}
		}
		// The handshake comes before any batch.
		if err := t.greet(dest); err != nil {
			if errors.Is(err, errTopology) {
				<-t.stop // the crawl is failing
				return
			}
			select {
			case <-t.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		q.mu.Lock()
		body, err := t.store.body(it)
		q.mu.Unlock()
		var ack BatchAck
		if err == nil {
			ack, err = t.post(dest, body)
		}
		if err != nil {
			select {
			case <-t.stop:
				return
			case <-q.ready:
				// woken: the queue changed (a requeue or a take)
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		t.observe(dest, ack.Epoch)
		q.mu.Lock()
		mine := len(q.items) > 0 && q.items[0] == it
		if mine {
			q.items[0] = nil
			q.items = q.items[1:]
			// Kept, should the receiver restart before its checkpoint
			// covers it.
			it.ackedBy = ack.Epoch
			if ack.Durable {
				t.store.drop(it)
			} else {
				q.acked = append(q.acked, it)
			}
		}
		q.mu.Unlock()
		if !mine {
			continue // taken for fail-over meanwhile
		}
		t.sent.Add(1)
		t.tr.Add(-1)
	}
}

func (t *HTTPTransport) request(c *http.Client, method string, dest int, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, "http://"+t.peers[dest]+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set(HeaderTopology, t.topoHash)
	req.Header.Set(HeaderTo, strconv.Itoa(dest))
	if body != nil {
		req.Header.Set("Content-Type", BatchContentType)
		req.Header.Set(HeaderEpoch, strconv.FormatUint(t.epoch.Load(), 10))
	}
	return c.Do(req)
}

func (t *HTTPTransport) post(dest int, body []byte) (BatchAck, error) {
	var ack BatchAck
	url := "http://" + t.peers[dest] + PathBatch
	resp, err := t.request(t.client, http.MethodPost, dest, PathBatch, body)
	if err != nil {
		return ack, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		text := strings.TrimSpace(string(msg))
		switch resp.StatusCode {
		case http.StatusServiceUnavailable:
		case http.StatusPreconditionFailed, http.StatusMisdirectedRequest:
			t.failTopology(fmt.Errorf("%w: node %d (%s) refused a batch: %s: %s", t.errConfig, dest, t.peers[dest], resp.Status, text))
		case http.StatusConflict:
			// The peer knows a later epoch of this node: move past it.
			if cur, err := strconv.ParseUint(resp.Header.Get(HeaderEpochCurrent), 10, 64); err == nil {
				t.moveEpochPast(cur, fmt.Sprintf("node %d answered %s", dest, text))
			}
		default:
			t.logf("%s: %s: %s", url, resp.Status, text)
		}
		return ack, fmt.Errorf("recorder: %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&ack); err != nil || ack.Epoch == 0 {
		return ack, fmt.Errorf("recorder: %s: bad acknowledgement", url)
	}
	return ack, nil
}

func (t *HTTPTransport) peerStatus(c *http.Client, i int) (NodeStatus, error) {
	if i == t.self {
		return t.status(), nil
	}
	resp, err := t.request(c, http.MethodGet, i, PathStatus, nil)
	if err != nil {
		return NodeStatus{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode == http.StatusPreconditionFailed || resp.StatusCode == http.StatusMisdirectedRequest {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			t.failTopology(fmt.Errorf("%w: node %d (%s) refused a status poll: %s: %s", t.errConfig, i, t.peers[i], resp.Status, strings.TrimSpace(string(msg))))
		}
		return NodeStatus{}, errors.New(resp.Status)
	}
	var s NodeStatus
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&s)
	if err == nil && (s.Node != i || s.Epoch == 0 || s.Epoch > maxEpoch) {
		err = fmt.Errorf("recorder: %s answers as node %d epoch %d", t.peers[i], s.Node, s.Epoch)
	}
	if err == nil && s.Topology != t.topoHash {
		t.failTopology(fmt.Errorf("%w: node %d (%s) has topology %q, this node %q", t.errConfig, i, t.peers[i], s.Topology, t.topoHash))
		err = errTopology
	}
	return s, err
}

// detect is the failure detector: every hb it asks each peer for its
// status (the heartbeat). A peer neither answering nor acknowledging for
// the peer timeout is declared dead; with fail-over the live set changes.
func (t *HTTPTransport) detect() {
	defer t.wg.Done()
	tick := time.NewTicker(t.hb)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		for i := range t.peers {
			if i == t.self {
				continue
			}
			err := t.greet(i)
			if errors.Is(err, errTopology) {
				continue
			}
			var s NodeStatus
			if err == nil {
				s, err = t.peerStatus(t.hbClient, i)
			}
			if err == nil {
				t.observe(i, s.Epoch)
				if t.self < len(s.Peers) && s.Peers[t.self] > t.epoch.Load() {
					t.moveEpochPast(s.Peers[t.self], fmt.Sprintf("node %d knows epoch %d of this node", i, s.Peers[t.self]))
				}
				t.forgetDurable(i, s.Durable)
				continue
			}
			t.peerMu.Lock()
			var live []bool
			died := !t.dead[i] && time.Since(t.heard[i]) > t.timeout
			if died {
				t.dead[i] = true
				live = t.liveLocked()
			}
			known := t.known[i]
			t.peerMu.Unlock()
			if died {
				p := i
				t.events.Write(tracefile.Event{Event: tracefile.EventPeerDead, Peer: &p, PeerEpoch: known})
				t.logf("peer %d declared dead (no heartbeat for %s)", i, t.timeout)
				if t.failover && t.onView != nil {
					t.onView(live)
				}
			}
		}
	}
}

// Drain stops accepting batches (senders keep them for a later start of
// this node) and waits up to d for this node's queues to be acknowledged
// by the live peers. It returns the batches left unacknowledged, which
// stay in the outbox for --resume.
func (t *HTTPTransport) Drain(d time.Duration) int {
	t.refusing.Store(true)
	if t.mismatch.Load() {
		t.tellMismatch(max(d, mismatchTell))
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

// mismatchTell is the least time a node stopping on a topology mismatch
// spends telling its peers (see tellMismatch).
const mismatchTell = 5 * time.Second

// tellMismatch greets every peer not greeted yet, so that a peer this node
// disagrees with learns it now rather than waiting for ever for a node
// that is gone. A peer that does not answer (still starting, or down) is
// greeted again until d has passed (one that answers, whatever it
// answers, is not): greeted once, a node that came up after its
// disagreeing peers had stopped never heard of the mismatch and waited for
// them for ever (a flake of TestPeerHandshakeRefuses under load).
func (t *HTTPTransport) tellMismatch(d time.Duration) {
	deadline := time.Now().Add(d)
	var left []int
	for i := range t.peers {
		if i != t.self && !t.greeted[i].Load() {
			left = append(left, i)
		}
	}
	for len(left) > 0 {
		var again []int
		for _, i := range left {
			// A transport error (no answer) is a *url.Error.
			var noAnswer *url.Error
			if err := t.greet(i); errors.As(err, &noAnswer) {
				again = append(again, i)
			}
		}
		left = again
		if len(left) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
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

// Epoch is this node's current incarnation (moved past a peer's view of
// it when needed).
func (t *HTTPTransport) Epoch() uint64 { return t.epoch.Load() }

// Sent is the number of batches peers acknowledged, this incarnation;
// Resent the number of batches sent again (loaded from the outbox, or
// requeued for a restarted receiver).
func (t *HTTPTransport) Sent() uint64 { return t.sent.Load() }

// Resent: see Sent.
func (t *HTTPTransport) Resent() uint64 { return t.resent.Load() }

// Refused is the number of requests this node's endpoint refused (a
// wrong token, topology or node, a stale epoch, a body too large) or
// turned away for now (503: no free slot or memory, or stopping).
func (t *HTTPTransport) Refused() uint64 { return t.refused.Load() }

// OutboxDir is the outbox directory (Options.Outbox).
func (t *HTTPTransport) OutboxDir() string { return t.outbox }

// Logf writes one line to the node's log.
func (t *HTTPTransport) Logf(format string, args ...any) { t.logf(format, args...) }
