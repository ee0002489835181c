package peer

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
)

// TopologyFormat names a node's saved topology,
// OutDir/node-NNN/state/topology.json.
const TopologyFormat = "crawltrace-topology"

// TopologyFileName is the topology file in a node's state directory.
const TopologyFileName = "topology.json"

// FingerprintScheme is what a URL fingerprint means in this version: the
// 64-bit xxhash of the normalized URL. It is part of the topology, so a
// node or a resume that fingerprints otherwise is refused.
const FingerprintScheme = "xxhash64(urlnorm)"

// Topology is everything that decides which node owns a host and what a
// fingerprint means. It is fixed for a crawl's life: saved in each node's
// state directory when the crawl starts, compared on every resume
// ([Topology.Diff]) and, in TCP mode, exchanged with every peer before
// any batch (the handshake, PathHello). Everything else in the crawl's
// configuration may change on a resume.
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

// Diff compares t, the topology a command line asks for, with saved, the
// one the crawl was started with, and returns one phrase per field that
// differs, naming the flag and both values ("--nodes 1, saved 3"); empty
// when they agree.
func (t Topology) Diff(saved Topology) []string {
	fields := []topoField{crawlIDField}
	if len(t.Peers) == 0 || len(saved.Peers) == 0 {
		fields = append(fields, nodesField)
	}
	if len(t.Peers) != 0 || len(saved.Peers) != 0 {
		fields = append(fields, peersField, nodeIDField)
	}
	fields = append(fields, sharedFields...)
	return diffFields(t, saved, "%s %s, saved %s", fields)
}

// topoField is a field of a topology: the flag (or name) that sets it and
// its value as a phrase shows it.
type topoField struct {
	flag string
	text func(Topology) string
}

var (
	crawlIDField = topoField{"--crawl-id", func(t Topology) string { return strconv.Quote(t.CrawlID) }}
	nodesField   = topoField{"--nodes", func(t Topology) string { return strconv.Itoa(t.Nodes) }}
	peersField   = topoField{"--peers", func(t Topology) string { return peersText(t.Peers) }}
	nodeIDField  = topoField{"--node-id", func(t Topology) string { return strconv.Itoa(t.NodeID) }}
	// sharedFields follow the node count in a phrase list.
	sharedFields = []topoField{
		{"--partitioner", func(t Topology) string { return t.Partitioner }},
		{"--replicas", func(t Topology) string { return strconv.Itoa(t.Replicas) }},
		{"--politeness-key", func(t Topology) string { return t.PolitenessKey }},
		{"fingerprint scheme", func(t Topology) string { return t.Fingerprint }},
	}
)

// diffFields returns one phrase per field whose text differs between a and
// b, format applied to the field's flag, a's text and b's text.
func diffFields(a, b Topology, format string, fields []topoField) []string {
	var out []string
	for _, f := range fields {
		if x, y := f.text(a), f.text(b); x != y {
			out = append(out, fmt.Sprintf(format, f.flag, x, y))
		}
	}
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
	out := diffFields(t, o, "%s: here %s, there %s", append([]topoField{crawlIDField, peersField}, sharedFields...))
	if len(out) == 0 && t.Hash() != o.Hash() {
		out = append(out, "descriptors differ")
	}
	return out
}

// TopologyFlags are the flags a resume may not change.
func TopologyFlags() []string {
	return []string{"--crawl-id", "--nodes", "--node-id", "--peers", "--partitioner", "--replicas", "--politeness-key"}
}

// SaveTopology writes t as dir/topology.json (dir is a node's state
// directory), as sealed JSON (tracefile.MarshalSealed): with a checksum
// of itself.
func SaveTopology(dir string, t Topology) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return tracefile.WriteSealedJSON(filepath.Join(dir, TopologyFileName), t)
}

// LoadTopology reads dir/topology.json (dir is a node's state directory)
// and proves it: its checksum, its keys (none unknown, none missing) and
// its values (a node below the crawl's nodes, one address per node, a
// known partitioner); ok is false when the crawl predates it (no file).
// A topology.json written before it carried a checksum is read with its
// keys and values checked. Anything wrong is an error matching
// tracefile.ErrCorrupt naming the file.
func LoadTopology(dir string) (t Topology, ok bool, err error) {
	path := filepath.Join(dir, TopologyFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("recorder: %w", err)
	}
	if err := tracefile.UnmarshalSealed(path, b, &t); err != nil && !errors.Is(err, tracefile.ErrUnsealed) {
		return Topology{}, false, fmt.Errorf("recorder: topology: %w", err)
	}
	if why := t.check(); why != "" {
		return Topology{}, false, fmt.Errorf("%w: %s: not a crawltrace topology: %s", tracefile.ErrCorrupt, path, why)
	}
	return t, true, nil
}

// check says what makes t impossible, or "".
func (t Topology) check() string {
	switch {
	case t.Format != TopologyFormat:
		return fmt.Sprintf("format %q", t.Format)
	case t.Nodes < 1:
		return fmt.Sprintf("%d nodes", t.Nodes)
	case t.NodeID < 0 || t.NodeID >= t.Nodes:
		return fmt.Sprintf("node_id %d in a crawl of %d nodes", t.NodeID, t.Nodes)
	case len(t.Peers) > 0 && len(t.Peers) != t.Nodes:
		return fmt.Sprintf("%d peer addresses for %d nodes", len(t.Peers), t.Nodes)
	case len(t.Peers) == 0 && t.NodeID != 0:
		return fmt.Sprintf("node_id %d of an in-process crawl (always 0)", t.NodeID)
	case t.Partitioner != "" && !slices.Contains(tracefile.Partitioners, t.Partitioner):
		return fmt.Sprintf("unknown partitioner %q", t.Partitioner)
	case t.Replicas < 0:
		return fmt.Sprintf("%d replicas", t.Replicas)
	}
	return ""
}
