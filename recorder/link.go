package recorder

import (
	"context"
	"path/filepath"
	"time"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// A link joins the nodes of this process to the whole crawl: memLink when
// every node runs here (peer.MemTransport), tcpLink for the one node of a
// crawl over --peers (peer.HTTPTransport). Run drives both the same way:
// ready before the nodes' checkpoints load, open once they have, started
// once their seeds are queued, over when the crawl is, drain and close at
// the stop.
type link interface {
	// ready prepares the link's view of the nodes, before a checkpoint
	// loads.
	ready(nodes []*node)
	// open starts the transport; it returns the one the splitters send
	// through.
	open(nodes []*node) (peer.Transport, error)
	// started: every node queued its seeds or its checkpoint's batches.
	started()
	// over yields why the crawl ended by the link's own rule (the work
	// ran out, or a TCP node's page share was used); nothing until then.
	over(ctx context.Context) <-chan string
	// drain delivers what the nodes still hold for peers and reports the
	// batches left undelivered (kept for --resume) and whether the whole
	// crawl is finished; called once every fetch has stopped.
	drain(nodes []*node, reason string) (left int, crawlDone bool)
	// close stops the transport.
	close()
	// peerStats adds the link's counters to s.
	peerStats(s *Stats)
	// stopped records the stop (its event, and a line for what is left).
	stopped(reason string, left int)
	// write writes the run's manifest and stats: the crawl's own in one
	// process, the node's (the manifest merged with its peers') over TCP.
	write(man *tracefile.Manifest, s *Stats) error
}

func newLink(c *crawl, p *plan) link {
	if p.tcp {
		return &tcpLink{c: c, p: p}
	}
	return &memLink{c: c, p: p}
}

// memLink: every node of the crawl in this process.
type memLink struct {
	c *crawl
	p *plan
	t *peer.MemTransport
}

func (l *memLink) ready(nodes []*node) {
	c := l.c
	c.part, c.fronts = l.p.part, make([]*frontier.Frontier, l.p.total)
	for _, n := range nodes {
		c.fronts[n.id] = n.front
	}
}

func (l *memLink) open(nodes []*node) (peer.Transport, error) {
	rs := make([]peer.Receiver, len(nodes))
	for i, n := range nodes {
		rs[i] = n.split
	}
	l.t = peer.NewMemTransport(l.c.tr, rs)
	return l.t, nil
}

func (l *memLink) started() {}

// over: the crawl ends when nothing is left anywhere in the process (a
// used budget stops it directly, in crawl.reserve).
func (l *memLink) over(ctx context.Context) <-chan string {
	out := make(chan string, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.c.tr.Zero():
				if l.c.tr.Idle() {
					out <- StopDone
					return
				}
			}
		}
	}()
	return out
}

func (l *memLink) drain([]*node, string) (int, bool) { return 0, false }
func (l *memLink) close()                            { l.t.Close() }
func (l *memLink) peerStats(*Stats)                  {}
func (l *memLink) stopped(string, int)               {}
func (l *memLink) write(man *tracefile.Manifest, s *Stats) error {
	err := tracefile.WriteManifest(l.c.cfg.OutDir, man)
	if e := tracefile.WriteJSON(filepath.Join(l.c.cfg.OutDir, StatsName), s); err == nil {
		err = e
	}
	return err
}

// tcpLink: node cfg.NodeID of a crawl over --peers.
type tcpLink struct {
	c  *crawl
	p  *plan
	ht *peer.HTTPTransport
}

func (l *tcpLink) ready([]*node) {}

func (l *tcpLink) open(nodes []*node) (peer.Transport, error) {
	c, n0 := l.c, nodes[0]
	sp := n0.split
	ht, err := peer.NewHTTPTransport(peerOptions(c.cfg, c, sp, n0.outbox, l.p.epochs[n0.id], l.p.events, l.p.topo, failoverRing(c) != nil,
		func() bool { return c.budgetIdle(n0) }, func(live []bool) { sp.SendView(live) }))
	if err != nil {
		return nil, err
	}
	l.ht = ht
	l.p.events.Write(tracefile.Event{Event: tracefile.EventStart, Resume: c.cfg.Resume, OutboxBatches: ht.Loaded()})
	return ht, nil
}

func (l *tcpLink) started() { l.ht.Started() }

// over: the nodes' termination detection decided the crawl is over;
// with this node's page share used, that is a stop on the budget.
func (l *tcpLink) over(ctx context.Context) <-chan string {
	out := make(chan string, 1)
	quiet := l.ht.WatchTermination(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-quiet:
			if l.c.exhausted.Load() {
				out <- StopMaxPages
			} else {
				out <- StopDone
			}
		}
	}()
	return out
}

// drain: no URL is lost at the stop. Further batches are refused (their
// senders keep them), the splitter hands what the workers found to the
// transport, and the queues are delivered to the live peers; what is
// still unacknowledged stays in the outbox, saved with the final
// checkpoint for --resume.
func (l *tcpLink) drain(nodes []*node, reason string) (int, bool) {
	ht := l.ht
	ht.Refuse()
	sp := nodes[0].split
	for end := time.Now().Add(10 * time.Second); sp.Inflight() > 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	left := ht.Drain(drainWait)
	done := reason == StopDone && ht.Complete() && left == 0 && l.c.failed() == nil
	ht.ShutdownServer()
	return left, done
}

func (l *tcpLink) close() { l.ht.Close() }

func (l *tcpLink) peerStats(s *Stats) {
	ts := l.ht.Stats()
	s.BatchesAcked, s.BatchesResent, s.BatchesRefused = int64(ts.Sent), int64(ts.Resent), int64(ts.Refused)
	s.Epoch = ts.Epoch
}

func (l *tcpLink) stopped(reason string, left int) {
	l.p.events.Write(tracefile.Event{Event: tracefile.EventStop, Reason: reason, OutboxBatches: left})
	if left > 0 {
		l.ht.Logf("%d batches for peers not acknowledged; kept in the node's checkpoint for --resume", left)
	}
}

func (l *tcpLink) write(man *tracefile.Manifest, s *Stats) error {
	cfg := l.c.cfg
	err := outdir.MergeManifest(cfg.OutDir, man)
	if e := tracefile.WriteJSON(filepath.Join(tracefile.NodeDir(cfg.OutDir, cfg.NodeID), StatsName), s); err == nil {
		err = e
	}
	return err
}
