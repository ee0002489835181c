package recorder

import (
	"sync"
	"time"

	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// The checkpoint format, its atomic commit and its proof on resume are
// recorder/checkpoint's (its package doc draws the layout and each
// part's encoding). This file is the node's side: the parts a node
// registers, and the cut at which the nodes of a process save them.

// addCheckpointPart registers p to be saved in every checkpoint of n and
// loaded when the crawl resumes. Parts are saved in registration order on
// the splitter's goroutine at the cut, and loaded in the same order before
// the node starts (a part whose file an older checkpoint lacks is left as
// it is). Register parts in newNode, before Run starts the splitter.
func (n *node) addCheckpointPart(p checkpointPart) {
	n.parts = append(n.parts, p)
}

// writeCheckpoint saves every part of n into state/checkpoint.tmp/. It
// runs on the splitter goroutine at a cut (or after the splitter stopped).
func (n *node) writeCheckpoint(gen uint64, stop string) error {
	meta := checkpoint.Meta{CrawlID: n.cfg.CrawlID, Node: n.id, Generation: gen, Time: time.Now().UTC(), Stop: stop}
	if stop != "" {
		meta.Attempts = n.st.Attempts.Load()
		meta.CrawlDone = n.c.crawlDone
	}
	_, err := checkpoint.Write(n.cfg.OutDir, meta, n.checkpointParts())
	return err
}

// loadCheckpoint loads n's parts from dir, described by meta (proved by
// checkpoint.Find), in registration order. A part the checkpoint's
// metadata does not list is left as it is.
func (n *node) loadCheckpoint(dir string, meta checkpoint.Meta) error {
	return checkpoint.Load(dir, meta, n.checkpointParts())
}

// barrier is one periodic checkpoint's cut: every splitter parks, the
// coordinator notes the batches in transit, then every splitter saves.
type barrier struct {
	gen     uint64
	parked  sync.WaitGroup
	proceed chan struct{}
	saved   sync.WaitGroup
	mu      sync.Mutex
	err     error
}

// park is run by a splitter that took b from its checkpoint channel
// (nodeCut), once it handed the batches being filled to the transport.
func (b *barrier) park(n *node) {
	b.parked.Done()
	<-b.proceed
	if err := n.writeCheckpoint(b.gen, ""); err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		b.mu.Unlock()
	}
	b.saved.Done()
}

// checkpointer takes the checkpoints of the nodes of one process.
type checkpointer struct {
	c         *crawl
	nodes     []*node
	transport peer.Transport
	gen       uint64
	stop      chan struct{}
	done      chan struct{}
	taken     int
	last      time.Duration // how long the last checkpoint took
}

// run takes a checkpoint every cfg.CheckpointEvery until stopped.
func (k *checkpointer) run(every time.Duration) {
	defer close(k.done)
	if every <= 0 {
		<-k.stop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			if err := k.periodic(); err != nil {
				k.c.fail(err)
				return
			}
		}
	}
}

// periodic takes a checkpoint of every node at one cut while the crawl
// runs.
func (k *checkpointer) periodic() error {
	start := time.Now()
	k.gen++
	b := &barrier{gen: k.gen, proceed: make(chan struct{})}
	b.parked.Add(len(k.nodes))
	b.saved.Add(len(k.nodes))
	// Every splitter takes the barrier: they stop only after the
	// checkpointer has (Run closes k.stop and waits for k.done first).
	// A give-up case here would leave the nodes already parked waiting
	// for a proceed that never comes.
	for _, n := range k.nodes {
		n.split.Checkpoint(nodeCut{b, n})
	}
	b.parked.Wait()
	k.snapshotPending()
	close(b.proceed)
	b.saved.Wait()
	if b.err != nil {
		return b.err
	}
	if err := k.commit(); err != nil {
		return err
	}
	k.taken++
	k.last = time.Since(start)
	return nil
}

// final takes the checkpoint of a clean stop, once every splitter has
// drained its channel and closed its segments; it records why the crawl
// stopped.
func (k *checkpointer) final() error {
	k.gen++
	k.snapshotPending()
	for _, n := range k.nodes {
		if err := n.writeCheckpoint(k.gen, k.c.reason); err != nil {
			return err
		}
	}
	if err := k.commit(); err != nil {
		return err
	}
	k.taken++
	return nil
}

// snapshotPending gives every node's pending part the batches sent to it
// and not processed, while no splitter runs.
func (k *checkpointer) snapshotPending() {
	a, ok := k.transport.(batchAcker)
	for _, n := range k.nodes {
		n.pending.batches = nil
		if ok {
			n.pending.batches = a.Unprocessed(n.id)
		}
	}
}

func (k *checkpointer) commit() error {
	for _, n := range k.nodes {
		if err := checkpoint.Commit(k.c.cfg.OutDir, n.id); err != nil {
			return err
		}
	}
	for _, n := range k.nodes {
		checkpoint.RemoveOld(k.c.cfg.OutDir, n.id)
		// The batches this checkpoint covers are durable: their senders
		// may drop them from their outboxes.
		n.split.Checkpointed()
	}
	return nil
}
