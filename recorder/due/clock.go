package due

// Clock is a CLOCK cache of fingerprints: k slots on a ring, each with a
// mark bit, and a hand. A hit sets the mark; a miss fills the next free
// slot while there is one, else the hand sweeps forward clearing marks to
// the first unmarked slot, whose fingerprint is replaced, and moves past
// it. A new fingerprint is unmarked. These are the choices of
// replay/policy's CLOCK, so that a DUE's cache and a replay of the DUE's
// input through CLOCK of the same size hit on exactly the same accesses.
// The host splitter's cache of URLs sent to peers is one too. Not safe for
// concurrent use.
type Clock struct {
	keys  []uint64
	marks []bool
	index map[uint64]int32
	n     int
	hand  int
}

// NewClock returns an empty cache of size fingerprints.
func NewClock(size int) *Clock {
	return &Clock{keys: make([]uint64, size), marks: make([]bool, size), index: make(map[uint64]int32, size)}
}

// Access reports whether fp was cached, and caches it.
func (c *Clock) Access(fp uint64) bool {
	if i, ok := c.index[fp]; ok {
		c.marks[i] = true
		return true
	}
	if c.n < len(c.keys) {
		c.keys[c.n] = fp
		c.index[fp] = int32(c.n)
		c.n++
		return false
	}
	h := c.hand
	for c.marks[h] {
		c.marks[h] = false
		if h++; h == len(c.keys) {
			h = 0
		}
	}
	delete(c.index, c.keys[h])
	c.keys[h] = fp
	c.index[fp] = int32(h)
	if h++; h == len(c.keys) {
		h = 0
	}
	c.hand = h
	return false
}

// Bytes estimates the cache's memory: keys, marks and the index map
// (about 2x its entries of 12 bytes).
func (c *Clock) Bytes() int { return len(c.keys)*9 + len(c.keys)*24 }

// Size is the cache's capacity in fingerprints.
func (c *Clock) Size() int { return len(c.keys) }
