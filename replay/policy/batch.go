package policy

import "unsafe"

// Batcher is implemented by the policies whose AccessBatch serves a run of
// requests faster than an Access call each: it is Access on each key in
// order and returns the number of hits. Once a policy's hash table is
// larger than a core's caches, every lookup waits on memory; AccessBatch
// prefetches the table slots of the keys batchAhead requests ahead (see
// [table.prefetch]), so those waits overlap.
type Batcher interface {
	AccessBatch(keys []uint64) (hits int)
}

// batchAhead is how many requests ahead AccessBatch prefetches.
const batchAhead = 8

// prefetchSlots is the table size (slots of 16 bytes: 512 KiB) from which
// AccessBatch prefetches; a smaller table stays in the caches, where a
// prefetch is only a cost.
const prefetchSlots = 1 << 15

// accessBatch is AccessBatch for a policy whose lookups go through t.
// access is the policy's Access method value; its indirect call costs
// about what the Policy interface's did.
func accessBatch(t *table, keys []uint64, access func(uint64) bool) (hits int) {
	if len(t.slots) < prefetchSlots {
		for _, k := range keys {
			if access(k) {
				hits++
			}
		}
		return hits
	}
	for i, k := range keys {
		if j := i + batchAhead; j < len(keys) {
			t.prefetch(keys[j])
		}
		if access(k) {
			hits++
		}
	}
	return hits
}

// AccessBatch implements [Batcher].
func (c *CLOCK) AccessBatch(keys []uint64) int { return accessBatch(&c.t, keys, c.Access) }

// AccessBatch implements [Batcher].
func (c *FIFO) AccessBatch(keys []uint64) int { return accessBatch(&c.t, keys, c.Access) }

// AccessBatch implements [Batcher]. Above randomIndexMax keys it is
// accessBatch. Below, once the cache is full and its index is larger than
// prefetchSlots table slots of [table] take, it loads the home table slot
// of the key batchAhead requests ahead: a plain load into a sink, which
// the processor runs ahead of while it works on the requests in between,
// as it would a prefetch (an index of up to randomIndexMax keys, 8 MiB,
// stays in a last-level cache, so the load is short), and which costs less
// than a call to [prefetch]; and it looks each key up inline.
func (c *Random) AccessBatch(keys []uint64) (hits int) {
	if !c.small {
		return accessBatch(&c.t, keys, c.Access)
	}
	if c.n < c.size || c.x.bytes() < prefetchSlots*16 {
		for _, k := range keys {
			if c.Access(k) {
				hits++
			}
		}
		return hits
	}
	ck := c.keys
	slots, mask := c.x.slots, c.x.mask
	var sink uint64
	for i, k := range keys {
		if i < len(keys)-batchAhead {
			h := slotHash(keys[i+batchAhead])
			sink ^= slots[(h^h>>32)&mask]
		}
		h := slotHash(k)
		tag := h & tagMask
		p := (h ^ h>>32) & mask
		e := slots[p]
		for e != 0 {
			if e&tagMask == tag && ck[int(e&slotMask)-1] == k {
				break
			}
			p = (p + 1) & mask
			e = slots[p]
		}
		if e != 0 {
			hits++
			continue
		}
		c.replace(k, p)
		slots, mask = c.x.slots, c.x.mask
	}
	c.sink ^= sink
	return hits
}

// AccessBatch implements [Batcher].
func (c *SIEVE) AccessBatch(keys []uint64) int { return accessBatch(&c.t, keys, c.Access) }

// AccessBatch implements [Batcher].
func (c *S3FIFO) AccessBatch(keys []uint64) int { return accessBatch(&c.t, keys, c.Access) }

// AccessBatch implements [Batcher].
func (c *ARC) AccessBatch(keys []uint64) int { return accessBatch(&c.t, keys, c.Access) }

// AccessBatch implements [Batcher]. Besides the table slots it prefetches
// the list node of each key lruNodeAhead requests ahead, found in a slot
// prefetched earlier (a key evicted or moved by then only wastes the
// prefetch).
func (c *LRU) AccessBatch(keys []uint64) (hits int) {
	if len(c.t.slots) < prefetchSlots {
		for _, k := range keys {
			if c.Access(k) {
				hits++
			}
		}
		return hits
	}
	for i, k := range keys {
		if j := i + batchAhead; j < len(keys) {
			c.t.prefetch(keys[j])
		}
		if j := i + lruNodeAhead; j < len(keys) {
			if v, _, ok := c.t.find(keys[j]); ok {
				prefetch(unsafe.Pointer(&c.nodes[v]))
			}
		}
		if c.Access(k) {
			hits++
		}
	}
	return hits
}

// lruNodeAhead is how many requests ahead LRU.AccessBatch prefetches nodes.
const lruNodeAhead = 4
