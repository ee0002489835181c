package peer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/fliptest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func isCorrupt(err error) bool { return errors.Is(err, tracefile.ErrCorrupt) }

// oneNode is the topology of a one-node in-process crawl.
var oneNode = Topology{Format: TopologyFormat, CrawlID: "c1", Nodes: 1, Partitioner: "host", PolitenessKey: "host", Fingerprint: FingerprintScheme}

// Issue 32, case 6: every single-bit flip of topology.json is refused.
// Before, node_id 0 -> 4 in a one-node crawl and a garbled node_id key
// (read as node 0) were accepted.
func TestTopologyEveryBitFlipRefused(t *testing.T) {
	for _, topo := range []Topology{oneNode, {Format: TopologyFormat, CrawlID: "c2", Nodes: 3, NodeID: 2, Peers: []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"},
		Partitioner: "consistent", Replicas: 100, PolitenessKey: "host", Fingerprint: FingerprintScheme}} {
		dir := t.TempDir()
		if err := SaveTopology(dir, topo); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := LoadTopology(dir); err != nil || !ok || got.Hash() != topo.Hash() || got.NodeID != topo.NodeID {
			t.Fatalf("read back %+v, %v, %v", got, ok, err)
		}
		path := filepath.Join(dir, TopologyFileName)
		good, _ := os.ReadFile(path)
		fliptest.EveryBit(t, path, good, fliptest.Stride(len(good)), isCorrupt, func() error {
			_, _, err := LoadTopology(dir)
			return err
		})
	}
}

// A topology.json written before it carried a checksum is read, its
// keys and values checked: node_id 4 of one node, or a garbled key, is
// refused naming the file.
func TestTopologyChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, TopologyFileName)
	old := `{"format": "crawltrace-topology", "crawl_id": "c1", "nodes": 1, "node_id": 0, "partitioner": "host", "politeness_key": "host", "fingerprint": "xxhash64(urlnorm)"}` + "\n"
	os.WriteFile(path, []byte(old), 0o644)
	if got, ok, err := LoadTopology(dir); err != nil || !ok || got.CrawlID != "c1" {
		t.Fatalf("old topology.json: %+v %v %v", got, ok, err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"node_id": 0`, `"node_id": 4`, "node_id 4 in a crawl of 1 nodes"},
		{`"node_id"`, `"node_ie"`, `"node_ie"`},
		{`"nodes": 1`, `"nodes": 0`, "0 nodes"},
		{`"partitioner": "host"`, `"partitioner": "iost"`, `"iost"`},
	} {
		os.WriteFile(path, bytes.Replace([]byte(old), []byte(tc.from), []byte(tc.to), 1), 0o644)
		if _, _, err := LoadTopology(dir); !isCorrupt(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s -> %s: %v; want an error naming the file and %q", tc.from, tc.to, err, tc.want)
		}
	}
}

// FuzzLoadTopology: any topology.json is a topology or an error marked
// ErrCorrupt; a change to the one written is never accepted.
func FuzzLoadTopology(f *testing.F) {
	dir := f.TempDir()
	if err := SaveTopology(dir, oneNode); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, TopologyFileName)
	good, _ := os.ReadFile(path)
	fliptest.Fuzz(f, path, good, isCorrupt, func(t *testing.T, data []byte) error {
		got, _, err := LoadTopology(dir)
		if err == nil && !bytes.Equal(data, good) && (got.Hash() != oneNode.Hash() || got.NodeID != oneNode.NodeID) {
			t.Fatalf("a changed topology.json was accepted as %+v:\n%s", got, data)
		}
		return err
	})
}

// Every single-bit flip of the epoch file is refused; so are the file of
// `echo xx > state/epoch` and a number with no checksum line that is not
// one. The old form, the number alone, still reads.
func TestEpochEveryBitFlipRefused(t *testing.T) {
	dir := t.TempDir()
	if err := SetEpoch(dir, 1234567); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, EpochFile)
	good, _ := os.ReadFile(path)
	if e, err := ReadEpoch(dir); err != nil || e != 1234567 {
		t.Fatalf("read back %d, %v", e, err)
	}
	fliptest.EveryBit(t, path, good, 1, isCorrupt, func() error {
		_, err := ReadEpoch(dir)
		return err
	})
	for _, bad := range []string{"xx\n", "", "7", "07\n", "-1\n", "1 2\n", "18446744073709551616\n"} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := ReadEpoch(dir); !isCorrupt(err) || !strings.Contains(err.Error(), path) {
			t.Errorf("epoch file %q: %v", bad, err)
		}
		if _, err := BumpEpoch(dir); !isCorrupt(err) {
			t.Errorf("bump over epoch file %q: %v", bad, err)
		}
	}
	os.WriteFile(path, []byte("41\n"), 0o644)
	if e, err := BumpEpoch(dir); err != nil || e != 42 {
		t.Errorf("bump over the old form: %d, %v", e, err)
	}
}

// FuzzReadEpoch: any epoch file is an epoch or an error marked
// ErrCorrupt, never a panic; a change to a file with a checksum line is
// never accepted.
func FuzzReadEpoch(f *testing.F) {
	dir := f.TempDir()
	SetEpoch(dir, 7)
	path := filepath.Join(dir, EpochFile)
	good, _ := os.ReadFile(path)
	f.Add([]byte("xx\n"))
	fliptest.Fuzz(f, path, good, isCorrupt, func(t *testing.T, data []byte) error {
		e, err := ReadEpoch(dir)
		if err == nil && len(data) > 0 && bytes.Count(data, []byte("\n")) > 1 && !bytes.Equal(data, good) {
			t.Fatalf("a changed epoch file was accepted as %d: %q", e, data)
		}
		return err
	})
}
