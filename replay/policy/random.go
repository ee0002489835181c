package policy

// Random is the paper's RANDOM: on a miss with a full cache it evicts a
// uniformly random cached key and puts the new key in its place. Keys live
// in an array (slot order = insertion order until the cache fills) and the
// victim is slot splitmix64(Seed).intn(k), so a seed fixes the whole run.
// It is not safe for concurrent use.
type Random struct {
	size int
	n    int
	t    table
	keys []uint64
	rng  splitmix
}

var _ Policy = (*Random)(nil)

// NewRandom returns an empty RANDOM cache of size >= 1 keys whose victims
// are drawn from a SplitMix64 generator seeded with seed.
func NewRandom(size int, seed uint64) *Random {
	mustSize("random", size)
	return &Random{size: size, t: newTable(size), keys: make([]uint64, size), rng: splitmix{seed}}
}

// Access implements [Policy].
func (c *Random) Access(key uint64) bool {
	if _, ok := c.t.get(key); ok {
		return true
	}
	if c.n < c.size {
		c.keys[c.n] = key
		c.t.put(key, c.n)
		c.n++
		return false
	}
	v := c.rng.intn(c.size)
	c.t.del(c.keys[v])
	c.keys[v] = key
	c.t.put(key, v)
	return false
}

// Name implements [Policy].
func (c *Random) Name() string { return "random" }

// Len implements [Policy].
func (c *Random) Len() int { return c.n }

func (c *Random) memBytes() int { return c.t.bytes() + cap(c.keys)*8 }
