package partition

import "github.com/cespare/xxhash/v2"

// URL partitions by the whole URL: node = XXH64(u) mod N. It is a value
// type, safe for concurrent use.
type URL struct {
	N int // number of nodes, at least 1
}

var _ Partitioner = URL{}

// Node returns the node of u.
func (p URL) Node(u string) int { return int(xxhash.Sum64String(u) % uint64(p.N)) }

// Nodes returns N.
func (p URL) Nodes() int { return p.N }

// Name returns "url".
func (URL) Name() string { return "url" }
