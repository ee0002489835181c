package partition

import "github.com/cespare/xxhash/v2"

// Host is Mercator's host splitter: node = XXH64(HostOf(u)) mod N. It is a
// value type, safe for concurrent use.
type Host struct {
	N int // number of nodes, at least 1
}

var _ Partitioner = Host{}

// Node returns the node of u's host.
func (h Host) Node(u string) int { return int(xxhash.Sum64String(HostOf(u)) % uint64(h.N)) }

// Nodes returns N.
func (h Host) Nodes() int { return h.N }

// Name returns "host".
func (Host) Name() string { return "host" }
