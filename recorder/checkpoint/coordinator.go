package checkpoint

import (
	"sync"
	"time"
)

// A Node is one node of a process as the [Coordinator] checkpoints it.
// The recorder's nodes are its splitters with the state they own.
type Node interface {
	// ID is the node's id: its checkpoints are in StateDir(outDir, ID).
	ID() int
	// Park hands at to the goroutine that owns the node's state (the
	// recorder: its splitter), which runs it between two messages, once
	// it has handed on what it was about to send to other nodes, and
	// does nothing else until at returns. Park returns once that
	// goroutine has taken at; at returns once the node's parts are saved
	// at the cut, after every node of the process has parked.
	Park(at func())
	// Parts are the node's parts, in the order they are saved.
	Parts() []Part
	// Stopped fills in m, the description of a clean stop's checkpoint
	// of the node, what the node knows of its stop (Meta.Attempts,
	// Meta.CrawlDone).
	Stopped(m *Meta)
	// Committed tells the node that every node of the process has
	// switched to the checkpoint it saved last: what it covers is
	// durable.
	Committed()
}

// Transit is what the nodes of a process have sent each other and not
// yet processed.
type Transit interface {
	// Snapshot is called at a cut, while no node runs (every one parked,
	// or stopped), before any node saves: it gives each node the list of
	// what was sent to it and not processed, for the part that saves it.
	Snapshot()
}

// Options configure a [Coordinator].
type Options struct {
	// OutDir is the crawl directory the nodes' state directories are in.
	OutDir string
	// CrawlID is written in every checkpoint ([Meta.CrawlID]).
	CrawlID string
	// Gen is the generation of the checkpoint the crawl resumed from (0
	// for a new crawl); the next checkpoint is Gen+1.
	Gen uint64
	// Every is the time between two periodic checkpoints of [Coordinator.Run]
	// (none when 0 or less).
	Every time.Duration
	// Transit snapshots the batches in transit between the nodes at
	// each cut; nil when nothing is ever in transit.
	Transit Transit
	// OnError is told why a periodic checkpoint of Run failed; Run then
	// takes no more.
	OnError func(error)
}

// A Coordinator takes the checkpoints of the nodes of one process, each
// generation at one cut:
//
//  1. every node parks ([Node.Park]); the cut waits for the last one;
//  2. the batches in transit between them are snapshot ([Transit]);
//  3. each node saves its parts on its own goroutine into
//     state/checkpoint.tmp/ ([Write]), then goes on;
//  4. once every node has saved, each node's checkpoint is committed
//     ([Commit]), node by node;
//  5. once every node has switched, each node's checkpoint.old/ is removed
//     ([RemoveOld]) and the node is told ([Node.Committed]).
//
// If a node fails to save, the checkpoint fails and nothing is
// committed: every node keeps its previous checkpoint. The methods of a
// Coordinator are not safe for concurrent use, except [Coordinator.Stop]
// with [Coordinator.Run].
type Coordinator struct {
	o     Options
	nodes []Node
	gen   uint64
	stop  chan struct{}
	done  chan struct{}
	taken int
	last  time.Duration
}

// NewCoordinator returns a Coordinator of nodes.
func NewCoordinator(o Options, nodes []Node) *Coordinator {
	return &Coordinator{o: o, nodes: nodes, gen: o.Gen, stop: make(chan struct{}), done: make(chan struct{})}
}

// Run takes a periodic checkpoint every Options.Every until [Coordinator.Stop]
// or one fails (then it tells Options.OnError and returns). Run it on its
// own goroutine, once.
func (k *Coordinator) Run() {
	defer close(k.done)
	if k.o.Every <= 0 {
		<-k.stop
		return
	}
	t := time.NewTicker(k.o.Every)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			if err := k.Periodic(); err != nil {
				if k.o.OnError != nil {
					k.o.OnError(err)
				}
				return
			}
		}
	}
}

// Stop stops Run and waits for it to return (for the checkpoint it is
// taking, if any). Call it once, after Run was started, and before the
// nodes stop taking Park: a node parked at a cut waits for all the others.
func (k *Coordinator) Stop() {
	close(k.stop)
	<-k.done
}

// Periodic takes a checkpoint of every node at one cut while the nodes
// run (see [Coordinator]).
func (k *Coordinator) Periodic() error {
	start := time.Now()
	k.gen++
	gen := k.gen
	var (
		parked, saved sync.WaitGroup
		proceed       = make(chan struct{})
		mu            sync.Mutex
		first         error
	)
	parked.Add(len(k.nodes))
	saved.Add(len(k.nodes))
	// Every node takes the cut: a node that gave up here would leave the
	// nodes already parked waiting for a proceed that never comes.
	for _, n := range k.nodes {
		n.Park(func() {
			parked.Done()
			<-proceed
			if err := k.write(n, gen, ""); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
			saved.Done()
		})
	}
	parked.Wait()
	k.snapshot()
	close(proceed)
	saved.Wait()
	if first != nil {
		return first
	}
	if err := k.commit(); err != nil {
		return err
	}
	k.taken++
	k.last = time.Since(start)
	return nil
}

// Final takes the checkpoint of a clean stop, once every node has stopped
// (so none is parked), on the caller's goroutine; stop is why the crawl
// stopped ([Meta.Stop]).
func (k *Coordinator) Final(stop string) error {
	k.gen++
	k.snapshot()
	for _, n := range k.nodes {
		if err := k.write(n, k.gen, stop); err != nil {
			return err
		}
	}
	if err := k.commit(); err != nil {
		return err
	}
	k.taken++
	return nil
}

// Taken is the number of checkpoints taken.
func (k *Coordinator) Taken() int { return k.taken }

// Last is how long the last periodic checkpoint took, from the cut's
// start to the last node's commit.
func (k *Coordinator) Last() time.Duration { return k.last }

// write saves n's parts as generation gen into its checkpoint.tmp/.
func (k *Coordinator) write(n Node, gen uint64, stop string) error {
	m := Meta{CrawlID: k.o.CrawlID, Node: n.ID(), Generation: gen, Time: time.Now().UTC(), Stop: stop}
	if stop != "" {
		n.Stopped(&m)
	}
	_, err := Write(k.o.OutDir, m, n.Parts())
	return err
}

func (k *Coordinator) snapshot() {
	if k.o.Transit != nil {
		k.o.Transit.Snapshot()
	}
}

// commit switches every node to the checkpoint it wrote, then removes
// the previous ones.
func (k *Coordinator) commit() error {
	for _, n := range k.nodes {
		if err := Commit(k.o.OutDir, n.ID()); err != nil {
			return err
		}
	}
	for _, n := range k.nodes {
		RemoveOld(k.o.OutDir, n.ID())
		n.Committed()
	}
	return nil
}
