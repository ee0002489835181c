// The peer protocol: endpoints, headers and the JSON messages nodes
// exchange (the batch body itself is in wire.go).

package peer

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
