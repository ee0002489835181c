package peer

import (
	"slices"
	"testing"
)

// Diff and peerDiff name each changed field once, in flag order, with both
// values; the node count only where in-process nodes are involved, the
// peers and node id only where a TCP crawl is.
func TestTopologyDiffPhrases(t *testing.T) {
	inproc := Topology{CrawlID: "c", Nodes: 3, Partitioner: "host", Replicas: 1, PolitenessKey: "host", Fingerprint: "xxh64"}
	tcp := inproc
	tcp.Peers, tcp.NodeID = []string{"a:1", "b:2"}, 1
	for _, tc := range []struct {
		name      string
		got, want Topology
		diff      []string
	}{
		{"same", inproc, inproc, nil},
		{"nodes", with(inproc, func(t *Topology) { t.Nodes = 1 }), inproc, []string{"--nodes 1, saved 3"}},
		{"in-process against TCP", inproc, tcp, []string{`--peers (none: in-process nodes), saved "a:1,b:2" (2)`, "--node-id 0, saved 1"}},
		{"TCP node id and crawl id", with(tcp, func(t *Topology) { t.NodeID, t.CrawlID = 0, "d" }), tcp,
			[]string{`--crawl-id "d", saved "c"`, "--node-id 0, saved 1"}},
		{"shared fields", with(tcp, func(t *Topology) {
			t.Partitioner, t.Replicas, t.PolitenessKey, t.Fingerprint = "url", 2, "domain", "fnv"
		}), tcp,
			[]string{"--partitioner url, saved host", "--replicas 2, saved 1", "--politeness-key domain, saved host", "fingerprint scheme fnv, saved xxh64"}},
	} {
		if got := tc.got.Diff(tc.want); !slices.Equal(got, tc.diff) {
			t.Errorf("%s: Diff = %q, want %q", tc.name, got, tc.diff)
		}
	}
	a, b := tcp, with(tcp, func(t *Topology) { t.NodeID, t.Peers, t.Replicas = 0, []string{"a:1"}, 3 })
	if got, want := a.peerDiff(b), []string{`--peers: here "a:1,b:2" (2), there "a:1" (1)`, "--replicas: here 1, there 3"}; !slices.Equal(got, want) {
		t.Errorf("peerDiff = %q, want %q", got, want)
	}
	if got := a.peerDiff(with(a, func(t *Topology) { t.NodeID = 0 })); len(got) != 0 {
		t.Errorf("peerDiff of two nodes of one crawl = %q", got)
	}
}

func with(t Topology, change func(*Topology)) Topology {
	change(&t)
	return t
}
