package policy

// SIEVE is the policy of Zhang et al., "SIEVE is Simpler than LRU" (NSDI
// 2024): a FIFO queue, newest at the head, with one visited bit per key. A
// hit sets the bit. To evict, a hand that starts at the tail moves toward
// the head, clearing visited bits, wrapping from the head back to the
// tail, until it finds an unvisited key; that key is removed and the hand
// stays at the next key toward the head. New keys enter at the head,
// unvisited, and are never moved. It is not safe for concurrent use.
type SIEVE struct {
	size  int
	hand  int32 // -1: start at the tail
	lists       // one list; freq holds the visited bit
}

var _ Policy = (*SIEVE)(nil)

// NewSIEVE returns an empty SIEVE cache of size >= 1 keys.
func NewSIEVE(size int) *SIEVE {
	mustSize("sieve", size)
	return &SIEVE{size: size, hand: -1, lists: newLists(1, size)}
}

// Access implements [Policy].
func (c *SIEVE) Access(key uint64) bool {
	if v, ok := c.t.get(key); ok {
		c.s.nodes[v].freq = 1
		return true
	}
	if c.s.lens[0] >= c.size {
		nodes := c.s.nodes
		o := c.hand
		if o < 0 {
			o = nodes[0].prev
		}
		for nodes[o].freq != 0 {
			nodes[o].freq = 0
			o = nodes[o].prev
			if o == 0 {
				o = nodes[0].prev
			}
		}
		c.hand = nodes[o].prev
		if c.hand == 0 {
			c.hand = -1
		}
		c.s.unlink(o)
		c.t.del(nodes[o].key)
		c.s.release(o)
	}
	i := c.s.alloc(key)
	c.s.pushFront(0, i)
	c.t.put(key, int(i))
	return false
}

// Name implements [Policy].
func (c *SIEVE) Name() string { return "sieve" }

// Len implements [Policy].
func (c *SIEVE) Len() int { return c.s.lens[0] }
