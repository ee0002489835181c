package recorder

// The root's glue for package splitter: a node's splitter built from
// Config, and the adapters through which the splitter sees the node (its
// events, a checkpoint's cut).

import (
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// newSplitter makes node n's splitter (node id of total, routing by
// part), with the DUE cfg asks for.
func newSplitter(c *crawl, n *node, id, total int, part partition.Partitioner) (*splitter.Splitter, error) {
	cfg, p := c.cfg, c.plan
	o := splitter.Options{Node: id, Nodes: total, Part: part, Epoch: p.epochs[id], Queue: 4*cfg.Workers + 64, Budget: n.queue,
		BatchSize: cfg.SplitterBatch, FlushTick: min(cfg.Writer.FlushInterval, 200*time.Millisecond), CacheSize: cfg.SplitterCache,
		DUE: due.NewMemory(1024), Tracker: c.tr, Log: n.batches, Frontier: n.front, Redirects: &c.redirs,
		OutDir: cfg.OutDir, Now: cfg.Now, OnError: c.fail,
		NewDiskDUE: func() (due.Set, error) { return newDiskDUE(cfg, id) }}
	if c.tcp {
		o.BatchAge = tcpBatchAge
		o.Events = p.events
		if ring := failoverRing(c); ring != nil {
			o.Ring, o.Seeds = ring, p.seeds
		}
	}
	if !cfg.NoTrace {
		o.Logs = &splitter.Logs{Dir: tracefile.NodeDir(cfg.OutDir, id), Meta: n.meta, Writer: cfg.Writer, DiscardDir: n.discardDir,
			Discarded: func(urls, pages int64) {
				n.resume.DiscardedURLs += urls
				n.resume.DiscardedPages += pages
			}}
	}
	if cfg.DUE == DUEDisk {
		d, err := newDiskDUE(cfg, id)
		if err != nil {
			return nil, err
		}
		o.DUE = d
	} else if cfg.DUE != DUEMemory && cfg.Memory > 0 {
		o.DUELimit = int(cfg.Memory / 4)
	}
	return splitter.New(o), nil
}

// failoverRing is the ring a TCP crawl's splitter routes by with
// fail-over (a consistent partitioner), nil without fail-over.
func failoverRing(c *crawl) *partition.Consistent {
	if !c.tcp {
		return nil
	}
	ring, _ := c.plan.part.(*partition.Consistent)
	return ring
}

// tcpBatchAge is how long a TCP node's splitter lets a batch for a peer
// fill (splitter.Options.BatchAge). In the 3-node run of
// scripts/bench-crawl-tcp.sh, batches handed over as soon as the splitter
// was idle held 16 URLs on average, and writing each one's outbox file
// took a third of a node's CPU time; 50 ms made 1,300-2,000 batches of
// the crawl 580-700, 200 ms 170-180, for 5.2-5.7 CPU s against 5.5-6.1
// (docs/benchmarks.md, "A crawl over TCP"). A batch that is all the work
// its node has left goes at once, so the age never delays the end.
var tcpBatchAge = 200 * time.Millisecond

var (
	_ splitter.Frontier  = (*frontier.Frontier)(nil)
	_ splitter.Redirects = (*fetch.Redirects)(nil)
)
