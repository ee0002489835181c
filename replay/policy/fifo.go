package policy

// FIFO evicts the key that entered the cache first, ignoring hits. Keys
// live in a ring of k slots; the oldest is at the hand. It is not safe for
// concurrent use.
type FIFO struct {
	slots
	hand int
}

var _ Policy = (*FIFO)(nil)

// NewFIFO returns an empty FIFO cache of size >= 1 keys.
func NewFIFO(size int) *FIFO {
	mustSize("fifo", size)
	return &FIFO{slots: newSlots(size)}
}

// Access implements [Policy].
func (c *FIFO) Access(key uint64) bool {
	_, free, ok := c.find(key)
	if ok {
		return true
	}
	if c.n < c.size {
		c.fill(key)
	} else {
		c.replaceAt(c.hand, key, free)
		c.hand = c.next(c.hand)
	}
	return false
}

// Name implements [Policy].
func (c *FIFO) Name() string { return "fifo" }

// Len implements [Policy].
func (c *FIFO) Len() int { return c.n }
