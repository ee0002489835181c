package recorder

// The root's glue for package peer: the transport's options built from
// Config, the topology a Config asks for and the resume check, and the
// adapters through which peer sees the node (its event log, its batch log
// as a checkpoint part).

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// endpointMemory is the peer endpoint's share of Config.Memory: a
// sixteenth (the frontier takes half, the DUE a quarter, the splitter
// queue an eighth and the disk DUE's buffer a sixteenth), 64 MiB without
// a budget.
func endpointMemory(cfg *Config) int64 {
	if cfg.Memory > 0 {
		return max(cfg.Memory/16, 1<<20)
	}
	return 64 << 20
}

// maxBatchBytes is the largest batch body a node of cfg's crawl accepts
// (peer.MaxBatchBytes).
func maxBatchBytes(cfg *Config) int64 {
	return peer.MaxBatchBytes(cfg.Filter.MaxURLLength, cfg.MaxBodyBytes, cfg.SplitterBatch)
}

// peerOptions are the options of node cfg.NodeID's TCP transport in
// crawl c, which delivers to sp. failover says the splitter routes by
// the live ring; idle reports whether the node has nothing to fetch;
// onView is told of a new live set (fail-over).
func peerOptions(cfg *Config, c *crawl, sp *splitter.Splitter, part *peer.OutboxPart, epoch uint64, events *tracefile.EventLog, topo peer.Topology,
	failover bool, idle func() bool, onView func(live []bool)) peer.Options {
	sdir := stateDir(cfg.OutDir, cfg.NodeID)
	return peer.Options{Self: cfg.NodeID, Peers: cfg.Peers, Listen: cfg.Listen, Listener: cfg.listener, Token: cfg.Token,
		Epoch: epoch, Topology: topo, StateDir: sdir, Outbox: filepath.Join(sdir, outboxDirName), Part: part, Resume: cfg.Resume,
		PeerTimeout: cfg.PeerTimeout, MaxBody: maxBatchBytes(cfg), EndpointMemory: endpointMemory(cfg),
		Failover: failover, OnView: onView, Tracker: c.tr, Receiver: sp, Idle: idle,
		Events: events, OnError: c.fail, ErrConfig: ErrConfig}
}

// Packages peer and splitter write to a node's event log as it is.
var (
	_ peer.Events     = (*tracefile.EventLog)(nil)
	_ splitter.Events = (*tracefile.EventLog)(nil)
)

// batchAcker is a transport that knows which batches a node has not
// processed yet (the in-memory transport, peer.MemTransport): a
// checkpoint taken while every splitter is parked saves them with the
// receiving node's state.
type batchAcker interface {
	// Processed records that dest's splitter has admitted b.
	Processed(dest int, b *peer.Batch)
	// Unprocessed returns the batches sent to dest and not processed yet.
	Unprocessed(dest int) []*peer.Batch
}

var _ batchAcker = (*peer.MemTransport)(nil)

// batchLogPart is a receiver's batch log as a part of its checkpoint.
type batchLogPart struct{ *peer.BatchLog }

func (batchLogPart) Name() string { return peer.CheckpointName }

// topologyOf is cfg's topology; part is the crawl's partitioner.
func topologyOf(cfg *Config, part partition.Partitioner) peer.Topology {
	t := peer.Topology{Format: peer.TopologyFormat, CrawlID: cfg.CrawlID, Nodes: cfg.Nodes, Partitioner: part.Name(),
		PolitenessKey: cmpOr(cfg.PolitenessKey, PolitenessHost), Fingerprint: peer.FingerprintScheme}
	if len(cfg.Peers) > 0 {
		t.Nodes, t.NodeID, t.Peers = len(cfg.Peers), cfg.NodeID, slices.Clone(cfg.Peers)
	}
	if c, ok := part.(*partition.Consistent); ok {
		t.Replicas = c.Replicas()
	}
	return t
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkTopology is the resume check: the topology cfg asks for must be the
// one saved when the crawl started (in every local node's state
// directory; a crawl older than topology.json is compared with its saved
// configuration, saved). A difference is an ErrConfig error naming each
// flag and its saved value. A fresh start saves the topology instead.
func checkTopology(cfg *Config, local []int, want peer.Topology, saved *Config) error {
	if cfg.OutDir == "" {
		return nil
	}
	// The nodes of a TCP crawl share the directory: one at a time
	// compares its topology with those already there and saves its own.
	// A resume compares its own saved topology first (the clearer
	// message for a changed flag); a fresh start saves its own only once
	// the others are known to agree.
	return outdir.Serialize(cfg.OutDir, topologyLockName, func() error {
		if cfg.Resume {
			if err := checkLocalTopology(cfg, local, want, saved); err != nil {
				return err
			}
			return checkOneCrawl(cfg, local, want)
		}
		if err := checkOneCrawl(cfg, local, want); err != nil {
			return err
		}
		return checkLocalTopology(cfg, local, want, saved)
	})
}

// topologyLockName is the lock file, in a crawl directory, under which a
// node compares and saves its topology.
const topologyLockName = "topology.lock"

// checkOneCrawl refuses a node whose crawl is not the one the directory
// holds: every other node directory's saved topology must be want's,
// crawl id included (the node id aside). A directory holds one crawl.
func checkOneCrawl(cfg *Config, local []int, want peer.Topology) error {
	nodes, err := tracefile.CrawlNodes(cfg.OutDir)
	if err != nil {
		return nil // no node directory yet
	}
	for _, id := range nodes {
		if slices.Contains(local, id) {
			continue
		}
		path := filepath.Join(stateDir(cfg.OutDir, id), peer.TopologyFileName)
		have, ok, err := peer.LoadTopology(stateDir(cfg.OutDir, id))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		w := want
		w.NodeID = have.NodeID
		if len(cfg.Peers) == 0 {
			w.NodeID = 0
		}
		d := w.Diff(have)
		switch {
		case len(d) == 0:
		case have.CrawlID != want.CrawlID:
			return fmt.Errorf("%w: %s holds crawl %q (%s), and this node is of crawl %q: a directory holds one crawl; use another directory",
				ErrConfig, cfg.OutDir, have.CrawlID, path, want.CrawlID)
		default:
			return fmt.Errorf("%w: %s holds crawl %q with another topology (%s): %s; a directory holds one crawl: give every node the same flags, or use another directory",
				ErrConfig, cfg.OutDir, have.CrawlID, path, strings.Join(d, "; "))
		}
	}
	return nil
}

// checkLocalTopology saves the topology of each local node on a fresh
// start, and compares it with the saved one on a resume.
func checkLocalTopology(cfg *Config, local []int, want peer.Topology, saved *Config) error {
	for _, id := range local {
		w := want
		if len(cfg.Peers) == 0 {
			w.NodeID = 0
		}
		if !cfg.Resume {
			if err := peer.SaveTopology(stateDir(cfg.OutDir, id), w); err != nil {
				return err
			}
			continue
		}
		have, ok, err := peer.LoadTopology(stateDir(cfg.OutDir, id))
		if err != nil {
			return err
		}
		if !ok {
			if saved == nil {
				continue
			}
			part, perr := partition.New(saved.Partitioner, max(saved.Nodes, len(saved.Peers)), saved.Replicas)
			if perr != nil {
				return fmt.Errorf("%w: saved configuration: %v", ErrConfig, perr)
			}
			have = topologyOf(saved, part)
			if err := peer.SaveTopology(stateDir(cfg.OutDir, id), have); err != nil {
				return err
			}
		}
		if d := w.Diff(have); len(d) > 0 {
			return fmt.Errorf("%w: %s: a resume may not change the crawl's topology (%s): %s",
				ErrConfig, filepath.Join(stateDir(cfg.OutDir, id), peer.TopologyFileName), strings.Join(peer.TopologyFlags(), ", "), strings.Join(d, "; "))
		}
	}
	return nil
}
