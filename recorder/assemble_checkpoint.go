package recorder

// The root's glue for package checkpoint: the coordinator of a process's
// checkpoints built from Config, and the adapters through which it sees
// the nodes (their splitters, parts and counters) and the batches in
// transit between them. The format and the cut are recorder/checkpoint's.

import (
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// addCheckpointPart registers p to be saved in every checkpoint of n and
// loaded when the crawl resumes. Parts are saved in registration order on
// the splitter's goroutine at the cut, and loaded in the same order before
// the node starts (a part whose file an older checkpoint lacks is left as
// it is). Parts are saved and loaded at a consistent point: on the
// splitter's goroutine, with workers holding no page whose URLs the
// splitter has not seen. Register parts in newNode, before Run starts the
// splitter.
func (n *node) addCheckpointPart(p checkpoint.Part) {
	n.parts = append(n.parts, p)
}

// newCheckpointer makes the coordinator of the checkpoints of nodes,
// whose batches in transit transport knows; gen is the generation the
// crawl resumed from. A periodic checkpoint that fails fails the crawl.
func newCheckpointer(c *crawl, nodes []*node, transport peer.Transport, gen uint64) *checkpoint.Coordinator {
	ns := make([]checkpoint.Node, len(nodes))
	for i, n := range nodes {
		ns[i] = checkpointNode{n}
	}
	o := checkpoint.Options{OutDir: c.cfg.OutDir, CrawlID: c.cfg.CrawlID, Gen: gen, Every: c.cfg.CheckpointEvery,
		Transit: inTransit{nodes, transport}, OnError: c.fail}
	return checkpoint.NewCoordinator(o, ns)
}

// checkpointNode is a node as the checkpoint coordinator drives it.
type checkpointNode struct{ n *node }

func (x checkpointNode) ID() int                  { return x.n.id }
func (x checkpointNode) Park(at func())           { x.n.split.Checkpoint(splitterCut(at)) }
func (x checkpointNode) Parts() []checkpoint.Part { return x.n.parts }
func (x checkpointNode) Committed()               { x.n.split.Checkpointed() }

// Stopped records the node's fetches and whether the whole crawl was
// over (a TCP node's complete termination decision).
func (x checkpointNode) Stopped(m *checkpoint.Meta) {
	m.Attempts = x.n.st.Counts().FetchAttempts
	m.CrawlDone = x.n.c.crawlDone
}

// splitterCut is a checkpoint's cut as a node's splitter takes it: the
// splitter runs it on its goroutine.
type splitterCut func()

func (at splitterCut) Park() { at() }

// inTransit gives every node's pending part the batches sent to it and
// not processed, at a cut (when the transport knows them: the in-memory
// one; a TCP node's senders keep theirs in their outboxes).
type inTransit struct {
	nodes     []*node
	transport peer.Transport
}

func (t inTransit) Snapshot() {
	a, ok := t.transport.(batchAcker)
	for _, n := range t.nodes {
		n.pending.batches = nil
		if ok {
			n.pending.batches = a.Unprocessed(n.id)
		}
	}
}

var (
	_ checkpoint.Part    = countersPart{}
	_ checkpoint.Part    = (*pendingPart)(nil)
	_ checkpoint.Part    = batchLogPart{}
	_ checkpoint.Node    = checkpointNode{}
	_ checkpoint.Transit = inTransit{}
	_ splitter.Cut       = splitterCut(nil)
)
