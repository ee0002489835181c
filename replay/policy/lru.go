package policy

// LRU evicts the least recently requested key. It keeps a hash table from
// key to node and an intrusive doubly linked list, most recent first, over
// a fixed slab of 16-byte nodes (the paper used a heap ordered by last
// access time; the list gives the same order in O(1)). The slab grows with
// the keys held, up to size+1 nodes. It is not safe for concurrent use.
type LRU struct {
	size  int
	n     int
	t     table
	nodes []lruNode // nodes[0] is the list sentinel
}

type lruNode struct {
	key        uint64
	prev, next int32
}

var _ Policy = (*LRU)(nil)

// NewLRU returns an empty LRU cache of size >= 1 keys.
func NewLRU(size int) *LRU {
	mustSize("lru", size)
	return &LRU{size: size, t: newTable(size), nodes: make([]lruNode, 1, 1+startCap(size))}
}

// Access implements [Policy].
func (c *LRU) Access(key uint64) bool {
	nodes := c.nodes
	if v, ok := c.t.get(key); ok {
		i := int32(v)
		if nodes[0].next != i {
			p, x := nodes[i].prev, nodes[i].next
			nodes[p].next = x
			nodes[x].prev = p
			f := nodes[0].next
			nodes[i].prev, nodes[i].next = 0, f
			nodes[f].prev = i
			nodes[0].next = i
		}
		return true
	}
	var i int32
	if c.n < c.size {
		c.n++
		i = int32(c.n)
		if c.n >= len(nodes) {
			c.nodes = grow(c.nodes, c.n+1, c.size+1)
			nodes = c.nodes
		}
	} else {
		i = nodes[0].prev
		c.t.del(nodes[i].key)
		p := nodes[i].prev
		nodes[p].next = 0
		nodes[0].prev = p
	}
	f := nodes[0].next
	nodes[i] = lruNode{key: key, prev: 0, next: f}
	nodes[f].prev = i
	nodes[0].next = i
	c.t.put(key, int(i))
	return false
}

// Name implements [Policy].
func (c *LRU) Name() string { return "lru" }

// Len implements [Policy].
func (c *LRU) Len() int { return c.n }

func (c *LRU) memBytes() int { return c.t.bytes() + cap(c.nodes)*16 }
