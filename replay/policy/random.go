package policy

// Random is the paper's RANDOM: on a miss with a full cache it evicts a
// uniformly random cached key and puts the new key in its place. Keys live
// in an array (slot order = insertion order until the cache fills) and the
// victim is slot splitmix64(Seed).intn(k), so a seed fixes the whole run.
// It is not safe for concurrent use.
type Random struct {
	slots
	rng splitmix
}

var _ Policy = (*Random)(nil)

// NewRandom returns an empty RANDOM cache of size >= 1 keys whose victims
// are drawn from a SplitMix64 generator seeded with seed.
func NewRandom(size int, seed uint64) *Random {
	mustSize("random", size)
	return &Random{slots: newSlots(size), rng: splitmix{seed}}
}

// Access implements [Policy].
func (c *Random) Access(key uint64) bool {
	if _, ok := c.lookup(key); ok {
		return true
	}
	if !c.fill(key) {
		c.replace(c.rng.intn(c.size), key)
	}
	return false
}

// Name implements [Policy].
func (c *Random) Name() string { return "random" }

// Len implements [Policy].
func (c *Random) Len() int { return c.n }
