package partition

import (
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Consistent is UbiCrawler's identifier-seeded consistent hashing over an
// arbitrary set of node ids: every node id owns Replicas points on a 64-bit
// ring, derived from the id alone, and a host belongs to the owner of the
// first point clockwise of XXH64(HostOf(u)). A Consistent is immutable and
// safe for concurrent use; With and Without return new values for node
// addition and loss what-ifs.
type Consistent struct {
	ids      []int // sorted, distinct
	replicas int
	points   []uint64 // sorted ring points
	owners   []int    // owners[i] owns points[i]
}

var _ Partitioner = (*Consistent)(nil)

// NewConsistent builds the ring for nodeIDs (duplicates are ignored) with
// replicas points per node (0 means DefaultReplicas). Node returns ids
// from nodeIDs.
func NewConsistent(nodeIDs []int, replicas int) *Consistent {
	if replicas <= 0 {
		replicas = DefaultReplicas
	}
	ids := slices.Clone(nodeIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	type point struct {
		p  uint64
		id int
	}
	all := make([]point, 0, len(ids)*replicas)
	for _, id := range ids {
		state := seed(id)
		for k := 0; k < replicas; k++ {
			var p uint64
			state, p = splitmix64(state)
			all = append(all, point{p, id})
		}
	}
	slices.SortFunc(all, func(a, b point) int {
		if a.p != b.p {
			if a.p < b.p {
				return -1
			}
			return 1
		}
		return a.id - b.id
	})
	c := &Consistent{ids: ids, replicas: replicas, points: make([]uint64, len(all)), owners: make([]int, len(all))}
	for i, pt := range all {
		c.points[i], c.owners[i] = pt.p, pt.id
	}
	return c
}

// seed returns the SplitMix64 start state of node id: XXH64 of its 8-byte
// little-endian encoding.
func seed(id int) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(id))
	return xxhash.Sum64(b[:])
}

// splitmix64 advances state and returns the new state and its output
// (Steele, Lea, Flood 2014; the generator used to seed xoshiro).
func splitmix64(state uint64) (uint64, uint64) {
	state += 0x9e3779b97f4a7c15
	z := state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return state, z ^ (z >> 31)
}

// Node returns the id of the node owning u's host, or -1 if the ring has
// no nodes.
func (c *Consistent) Node(u string) int { return c.NodeOfHash(xxhash.Sum64String(HostOf(u))) }

// NodeOfHash returns the id of the owner of the first ring point >= h
// (wrapping around), or -1 if the ring has no nodes.
func (c *Consistent) NodeOfHash(h uint64) int {
	n := len(c.points)
	if n == 0 {
		return -1
	}
	// Binary search for the first point >= h.
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.points[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == n {
		lo = 0
	}
	return c.owners[lo]
}

// Nodes returns the number of node ids.
func (c *Consistent) Nodes() int { return len(c.ids) }

// Name returns "consistent".
func (*Consistent) Name() string { return "consistent" }

// IDs returns the node ids in increasing order.
func (c *Consistent) IDs() []int { return slices.Clone(c.ids) }

// Replicas returns the number of ring points per node.
func (c *Consistent) Replicas() int { return c.replicas }

// Without returns the ring with node id removed (a node loss). Removing an
// absent id returns an equal ring.
func (c *Consistent) Without(id int) *Consistent {
	ids := slices.DeleteFunc(slices.Clone(c.ids), func(x int) bool { return x == id })
	return NewConsistent(ids, c.replicas)
}

// With returns the ring with node id added (a node joining). Adding a
// present id returns an equal ring.
func (c *Consistent) With(id int) *Consistent {
	return NewConsistent(append(slices.Clone(c.ids), id), c.replicas)
}
