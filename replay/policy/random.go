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
// draw, so it follows the paper and not libCacheSim.
//
// A cache of up to randomIndexMax keys finds its keys through a
// [slotIndex], whose entries are never deleted: a replacement is a store
// in the slot array and one in the index. A larger one keeps the [table]
// of [slots] (its keys in the table slots, so that a lookup reads one
// random cache line where the index's reads two), deletes each victim's
// entry, and draws its victims two evictions ahead to prefetch them. Both
// draw the same victims in the same order. It is not safe for concurrent
// use.
type Random struct {
	slots // size, n and keys; t only above randomIndexMax keys
	x     slotIndex
	small bool // size <= randomIndexMax: x indexes keys, t is unused
	rng   splitmix
	// Above randomIndexMax keys, the victims of the next two evictions,
	// drawn ahead (once the cache is full) in the order they are used, so
	// the draws are those of drawing each at its eviction; knowing them
	// early lets a large cache prefetch the victim's slot and table slot.
	victims [2]int
	drawn   bool
	sink    uint64 // AccessBatch's loads ahead end here
}

var _ Policy = (*Random)(nil)

// randomIndexMax is the largest cache that finds its keys through a
// slotIndex. Its lookups read the key an entry points to in the slot
// array, which costs little while the array (8 bytes a key) stays in the
// caches and a cache miss once it does not. On the 20M-request Zipf trace
// of docs/benchmarks.md (CPU-seconds of the whole replay, slot index
// against table): 0.42 against 0.65 at 2^16, 0.68-0.78 against 0.91-0.93 at
// 2^18, even at 2^19 (0.93-0.99 against 0.87-0.99), 0.90-1.03 against
// 0.65-0.69 at 2^20.
const randomIndexMax = 1 << 18

// NewRandom returns an empty RANDOM cache of size >= 1 keys whose victims
// are drawn from a SplitMix64 generator seeded with seed.
func NewRandom(size int, seed uint64) *Random {
	mustSize("random", size)
	if size > randomIndexMax {
		return &Random{slots: newSlots(size), rng: splitmix{seed}}
	}
	return &Random{
		slots: slots{size: size, keys: make([]uint64, 0, startCap(size))},
		x:     newSlotIndex(size),
		small: true,
		rng:   splitmix{seed},
	}
}

// Access implements [Policy].
func (c *Random) Access(key uint64) bool {
	if !c.small {
		return c.accessLarge(key)
	}
	_, free, ok := c.x.find(key, c.keys)
	if ok {
		return true
	}
	if c.n < c.size {
		c.x.add(key, c.keys)
		c.keys = grow(c.keys, c.n+1, c.size)
		c.keys[c.n] = key
		c.n++
		return false
	}
	c.replace(key, free)
	return false
}

// replace puts key, which the index reported absent at its free table slot
// free, in the slot of a victim drawn uniformly from the full cache.
func (c *Random) replace(key uint64, free uint64) {
	v := c.rng.intn(c.size)
	c.keys[v] = key
	c.x.putAt(free, key, v)
	if c.x.needsRebuild() {
		c.x.rebuild(c.keys)
	}
}

// accessLarge is Access above randomIndexMax keys.
func (c *Random) accessLarge(key uint64) bool {
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

func (c *Random) memBytes() int {
	if c.small {
		return c.x.bytes() + cap(c.keys)*8
	}
	return c.slots.memBytes()
}
