package policy

// FIFO evicts the key that entered the cache first, ignoring hits. Keys
// live in a ring of k slots; the oldest is at the hand. It is not safe for
// concurrent use.
type FIFO struct {
	size int
	n    int
	hand int
	t    table
	keys []uint64
}

var _ Policy = (*FIFO)(nil)

// NewFIFO returns an empty FIFO cache of size >= 1 keys.
func NewFIFO(size int) *FIFO {
	mustSize("fifo", size)
	return &FIFO{size: size, t: newTable(size), keys: make([]uint64, size)}
}

// Access implements [Policy].
func (c *FIFO) Access(key uint64) bool {
	if _, ok := c.t.get(key); ok {
		return true
	}
	if c.n < c.size {
		c.keys[c.n] = key
		c.t.put(key, c.n)
		c.n++
		return false
	}
	h := c.hand
	c.t.del(c.keys[h])
	c.keys[h] = key
	c.t.put(key, h)
	h++
	if h == c.size {
		h = 0
	}
	c.hand = h
	return false
}

// Name implements [Policy].
func (c *FIFO) Name() string { return "fifo" }

// Len implements [Policy].
func (c *FIFO) Len() int { return c.n }

func (c *FIFO) memBytes() int { return c.t.bytes() + cap(c.keys)*8 }
