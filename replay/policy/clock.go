package policy

// CLOCK is the paper's CLOCK: the cached keys sit in a circular array of k
// slots, each with a mark bit, and a hand points at one slot. A hit sets
// the key's mark. A miss fills the next free slot while the cache is not
// full; otherwise the hand sweeps forward clearing marks until it reaches
// an unmarked slot, whose key is evicted and replaced by the new one.
//
// Choices the paper leaves open: a newly inserted key is unmarked (the
// paper only sets marks on hits), and after a replacement the hand moves
// past the new key to the next slot, as in the classic algorithm (left on
// it, the next miss would evict the newcomer at once). It is not safe for
// concurrent use.
type CLOCK struct {
	slots
	hand  int
	marks []bool
}

var _ Policy = (*CLOCK)(nil)

// NewCLOCK returns an empty CLOCK cache of size >= 1 keys.
func NewCLOCK(size int) *CLOCK {
	mustSize("clock", size)
	return &CLOCK{slots: newSlots(size), marks: make([]bool, 0, startCap(size))}
}

// Access implements [Policy].
func (c *CLOCK) Access(key uint64) bool {
	i, free, ok := c.find(key)
	if ok {
		c.marks[i] = true
		return true
	}
	if c.n < c.size {
		c.fill(key)
		c.marks = grow(c.marks, c.n, c.size)
		return false
	}
	h := c.hand
	for c.marks[h] {
		c.marks[h] = false
		h = c.next(h)
	}
	c.replaceAt(h, key, free)
	c.hand = c.next(h)
	return false
}

// Name implements [Policy].
func (c *CLOCK) Name() string { return "clock" }

// Len implements [Policy].
func (c *CLOCK) Len() int { return c.n }

func (c *CLOCK) memBytes() int { return c.slots.memBytes() + cap(c.marks) }
