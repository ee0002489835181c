package policy

import "unsafe"

// Random is the paper's RANDOM: on a miss with a full cache it evicts a
// uniformly random cached key and puts the new key in its place. Keys live
// in an array (slot order = insertion order until the cache fills) and the
// victim is slot splitmix64(Seed).intn(k), so a seed fixes the whole run.
//
// libCacheSim's Random.c samples differently, and not uniformly, so its
// miss ratios differ from these by about a point (on a 20M-request Zipf
// trace 0.5740, 0.3725 and 0.1095 against crawltrace's 0.5811, 0.3624 and
// 0.1132 at 2^10, 2^16 and 2^20; docs/benchmarks.md). Random_to_evict
// returns chained_hashtable_rand_obj_v2 (chainedHashTableV2.c), which draws
// bucket numbers until one is non-empty and returns that bucket's head:
//
//   - only the head of each chain can be evicted. New keys are pushed at
//     the head of their chain, so of the keys that share a bucket only the
//     one inserted last is exposed; the others cannot leave until it does.
//     The table doubles when it holds more keys than buckets, so its load
//     a stays between 1/2 and 1 and, with keys hashed uniformly, a share
//     1 - (1 - e^-a)/a of the cache (21% to 37%) is protected at any time;
//   - every non-empty bucket is equally likely, so a key alone in its
//     bucket is exactly as likely to go as the newest of a long chain;
//   - the bucket number is next_rand() & mask, the low bits of a 64-bit
//     linear congruential generator (mymath.h). Those bits have period
//     2^bits, so the draws walk all buckets in a fixed cyclic order, and
//     consecutive victims are not independent.
//
// The crawler paper's RANDOM (and the usual definition) evicts each cached
// key with probability 1/k; Random does that with an unbiased bounded
// draw, so it follows the paper and not libCacheSim. It is not safe for
// concurrent use.
type Random struct {
	slots
	rng splitmix
	// The victims of the next two evictions, drawn ahead (once the cache
	// is full) in the order they are used, so the draws are those of
	// drawing each at its eviction; knowing them early lets a large cache
	// prefetch the victim's slot and table slot.
	victims [2]int
	drawn   bool
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
	_, free, ok := c.find(key)
	if ok {
		return true
	}
	if c.n < c.size {
		c.fill(key)
		return false
	}
	if !c.drawn {
		c.victims = [2]int{c.rng.intn(c.size), c.rng.intn(c.size)}
		c.drawn = true
	}
	v := c.victims[0]
	c.victims[0], c.victims[1] = c.victims[1], c.rng.intn(c.size)
	c.replaceAt(v, key, free)
	if len(c.t.slots) >= prefetchSlots {
		// The next victim's key was prefetched at the last eviction; its
		// table slot now, and the key of the one after.
		c.t.prefetch(c.keys[c.victims[0]])
		prefetch(unsafe.Pointer(&c.keys[c.victims[1]]))
	}
	return false
}

// Name implements [Policy].
func (c *Random) Name() string { return "random" }

// Len implements [Policy].
func (c *Random) Len() int { return c.n }
