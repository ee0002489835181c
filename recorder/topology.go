package recorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// TopologyFormat names a node's saved topology,
// OutDir/node-NNN/state/topology.json.
const TopologyFormat = "crawltrace-topology"

// topologyFileName is the topology file in a node's state directory.
const topologyFileName = "topology.json"

// FingerprintScheme is what a URL fingerprint means in this version: the
// 64-bit xxhash of the normalized URL. It is part of the topology, so a
// node or a resume that fingerprints otherwise is refused.
const FingerprintScheme = "xxhash64(urlnorm)"

// Topology is everything that decides which node owns a host and what a
// fingerprint means. It is fixed for a crawl's life: saved in each node's
// state directory when the crawl starts, compared on every resume
// ([Topology.Diff]) and, in TCP mode, exchanged with every peer before
// any batch (the handshake, PathHello). Everything else in [Config] may
// change on a resume.
type Topology struct {
	Format  string `json:"format"`
	CrawlID string `json:"crawl_id"`
	// Nodes is the number of nodes; NodeID this node (TCP mode; 0 for an
	// in-process crawl, whose nodes all share one descriptor).
	Nodes  int `json:"nodes"`
	NodeID int `json:"node_id"`
	// Peers is every node's address by id (TCP mode), empty in process.
	Peers       []string `json:"peers,omitempty"`
	Partitioner string   `json:"partitioner"`
	// Replicas per node of the consistent partitioner (0 for the others).
	Replicas      int    `json:"replicas,omitempty"`
	PolitenessKey string `json:"politeness_key"`
	Fingerprint   string `json:"fingerprint"`
}

// topologyOf is cfg's topology; part is the crawl's partitioner.
func topologyOf(cfg *Config, part partition.Partitioner) Topology {
	t := Topology{Format: TopologyFormat, CrawlID: cfg.CrawlID, Nodes: cfg.Nodes, Partitioner: part.Name(),
		PolitenessKey: cmpOr(cfg.PolitenessKey, PolitenessHost), Fingerprint: FingerprintScheme}
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

// Diff compares t, the topology a command line asks for, with saved, the
// one the crawl was started with, and returns one phrase per field that
// differs, naming the flag and both values ("--nodes 1, saved 3"); empty
// when they agree.
func (t Topology) Diff(saved Topology) []string {
	var out []string
	add := func(flag, got, want string) {
		if got != want {
			out = append(out, fmt.Sprintf("%s %s, saved %s", flag, got, want))
		}
	}
	add("--crawl-id", strconv.Quote(t.CrawlID), strconv.Quote(saved.CrawlID))
	if len(t.Peers) == 0 && len(saved.Peers) == 0 {
		add("--nodes", strconv.Itoa(t.Nodes), strconv.Itoa(saved.Nodes))
	} else {
		if len(t.Peers) == 0 || len(saved.Peers) == 0 {
			add("--nodes", strconv.Itoa(t.Nodes), strconv.Itoa(saved.Nodes))
		}
		add("--peers", peersText(t.Peers), peersText(saved.Peers))
		add("--node-id", strconv.Itoa(t.NodeID), strconv.Itoa(saved.NodeID))
	}
	add("--partitioner", t.Partitioner, saved.Partitioner)
	add("--replicas", strconv.Itoa(t.Replicas), strconv.Itoa(saved.Replicas))
	add("--politeness-key", t.PolitenessKey, saved.PolitenessKey)
	add("fingerprint scheme", t.Fingerprint, saved.Fingerprint)
	return out
}

func peersText(p []string) string {
	if len(p) == 0 {
		return "(none: in-process nodes)"
	}
	return fmt.Sprintf("%q (%d)", strings.Join(p, ","), len(p))
}

// shared is the part of t every node of a TCP crawl has in common (the
// node id cleared).
func (t Topology) shared() Topology {
	t.NodeID = 0
	t.Format = TopologyFormat
	return t
}

// Hash is the 64-bit xxhash of the shared descriptor's canonical JSON, in
// hex: what every peer request carries (HeaderTopology).
func (t Topology) Hash() string {
	b, _ := json.Marshal(t.shared())
	return strconv.FormatUint(xxhash.Sum64(b), 16)
}

// peerDiff compares the shared parts of two nodes' descriptors: one phrase
// per field that differs, "--peers: here ..., there ...".
func (t Topology) peerDiff(o Topology) []string {
	var out []string
	add := func(what, here, there string) {
		if here != there {
			out = append(out, fmt.Sprintf("%s: here %s, there %s", what, here, there))
		}
	}
	add("--crawl-id", strconv.Quote(t.CrawlID), strconv.Quote(o.CrawlID))
	add("--peers", peersText(t.Peers), peersText(o.Peers))
	add("--partitioner", t.Partitioner, o.Partitioner)
	add("--replicas", strconv.Itoa(t.Replicas), strconv.Itoa(o.Replicas))
	add("--politeness-key", t.PolitenessKey, o.PolitenessKey)
	add("fingerprint scheme", t.Fingerprint, o.Fingerprint)
	if len(out) == 0 && t.Hash() != o.Hash() {
		out = append(out, "descriptors differ")
	}
	return out
}

// TopologyFlags are the flags a resume may not change.
func TopologyFlags() []string {
	return []string{"--crawl-id", "--nodes", "--node-id", "--peers", "--partitioner", "--replicas", "--politeness-key"}
}

// saveTopology writes t as node's state/topology.json.
func saveTopology(outDir string, node int, t Topology) error {
	dir := stateDir(outDir, node)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return tracefile.WriteJSON(filepath.Join(dir, topologyFileName), t)
}

// loadTopology reads node's state/topology.json; ok is false when the
// crawl predates it (no file).
func loadTopology(outDir string, node int) (t Topology, ok bool, err error) {
	path := filepath.Join(stateDir(outDir, node), topologyFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("recorder: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil || t.Format != TopologyFormat {
		return t, false, fmt.Errorf("%w: %s: not a crawltrace topology", tracefile.ErrCorrupt, path)
	}
	return t, true, nil
}

// checkTopology is the resume check: the topology cfg asks for must be the
// one saved when the crawl started (in every local node's state
// directory; a crawl older than topology.json is compared with its saved
// configuration, saved). A difference is an ErrConfig error naming each
// flag and its saved value. A fresh start saves the topology instead.
func checkTopology(cfg *Config, local []int, want Topology, saved *Config) error {
	for _, id := range local {
		w := want
		if len(cfg.Peers) == 0 {
			w.NodeID = 0
		}
		if !cfg.Resume {
			if err := saveTopology(cfg.OutDir, id, w); err != nil {
				return err
			}
			continue
		}
		have, ok, err := loadTopology(cfg.OutDir, id)
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
			if err := saveTopology(cfg.OutDir, id, have); err != nil {
				return err
			}
		}
		if d := w.Diff(have); len(d) > 0 {
			return fmt.Errorf("%w: %s: a resume may not change the crawl's topology (%s): %s",
				ErrConfig, filepath.Join(stateDir(cfg.OutDir, id), topologyFileName), strings.Join(TopologyFlags(), ", "), strings.Join(d, "; "))
		}
	}
	return nil
}
