package recorder

// The root's glue for package splitter: a node's splitter built from
// Config, and the adapters through which the splitter sees the node (its
// frontier, the crawl's redirect table, a checkpoint's cut).

import (
	"time"

	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// newSplitter makes node n's splitter (node id of total, routing by
// part), with the DUE cfg asks for.
func newSplitter(c *crawl, n *node, id, total int, part partition.Partitioner) (*splitter.Splitter, error) {
	cfg := c.cfg
	o := splitter.Options{Node: id, Nodes: total, Part: part, Queue: 4*cfg.Workers + 64, QueueBytes: cfg.queueBytes(),
		BatchSize: cfg.SplitterBatch, FlushTick: min(cfg.Writer.FlushInterval, 200*time.Millisecond), CacheSize: cfg.SplitterCache,
		DUE: NewDUE(1024), Tracker: c.tr, Log: peer.NewBatchLog(), Frontier: splitFrontier{n.front}, Redirects: splitRedirects{&c.redirs},
		OutDir: cfg.OutDir, Now: cfg.Now, OnError: c.fail,
		NewDiskDUE: func() (due.Set, error) { return newDiskDUE(cfg, id) }}
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

// splitFrontier is a node's frontier as its splitter feeds it.
type splitFrontier struct{ f *frontier }

func (s splitFrontier) Add(u string)       { s.f.add(u) }
func (s splitFrontier) Finish(task uint64) { s.f.finish(task) }
func (s splitFrontier) Err() error         { return s.f.err() }

// splitRedirects is the crawl's redirect-hop table as the splitters trim
// it.
type splitRedirects struct{ c *redirectChains }

func (s splitRedirects) Forget(u string) { s.c.forget(u) }

// nodeCut is a periodic checkpoint's cut as node n's splitter takes it.
type nodeCut struct {
	b *barrier
	n *node
}

func (c nodeCut) Park() { c.b.park(c.n) }

var (
	_ splitter.Frontier  = splitFrontier{}
	_ splitter.Redirects = splitRedirects{}
	_ splitter.Events    = peerEvents{}
	_ splitter.Cut       = nodeCut{}
)
