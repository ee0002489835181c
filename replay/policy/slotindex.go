package policy

// slotIndex maps the keys of a slot array (a policy's []uint64 of cached
// keys, keys[s] the key in slot s) to their slots, for a policy that
// replaces keys in place. It is an open-addressing table of 8-byte entries
// (linear probing, Fibonacci hashing): an entry packs the top 32 bits of
// the key's hash (its tag) with the slot number + 1, and a lookup reads
// keys[s] only when an entry's tag matches, to confirm the key.
//
// An entry is never deleted. When slot s gets a new key, the entry of the
// key it held stays behind, stale: keys[s] no longer holds that key, so a
// lookup that reaches it reads on, exactly as past an entry of another key.
// Every key held has its entry, and a lookup confirms a key only in its own
// slot, so stale entries change no answer; they only fill the table. When
// live and stale entries reach half the table, rebuild clears it and puts
// back the keys held: with four table slots a key, that is once every size
// replacements at most, and a replacement costs one store in the table
// instead of a deletion (find the old key's entry, then shift the entries
// after it back), whose probe and shift loops mispredict a branch or two
// each and whose loads miss the caches once the table is larger than them.
//
// Slot numbers are below 2^32 - 1 (the policies' sizes are at most
// [MaxSize]); entry 0 marks a free table slot. A slotIndex is not safe for
// concurrent use.
type slotIndex struct {
	slots []uint64
	mask  uint64
	used  int // entries, live and stale
	full  int // table slots once the slot array is full (slotIndexSlots)
}

const (
	tagMask  = uint64(0xFFFFFFFF_00000000) // an entry's tag
	slotMask = 1<<32 - 1                   // an entry's slot number + 1
)

// slotIndexSlots is the number of table slots of a slotIndex over a full
// slot array of capacity keys: the smallest power of two holding four
// times the capacity, at least 8. The live entries then fill at most a
// quarter of it, and up to as many stale ones another quarter.
func slotIndexSlots(capacity int) int {
	n := 8
	for n < 4*capacity {
		n <<= 1
	}
	return n
}

// slotIndexBytes is the memory of a slotIndex over capacity keys.
func slotIndexBytes(capacity int) int { return slotIndexSlots(capacity) * 8 }

// newSlotIndex returns an index for a slot array of up to capacity keys.
// While the array fills, the table holds at most twice its keys (starting
// small and doubling); its full size comes with the first replacement.
func newSlotIndex(capacity int) slotIndex {
	x := slotIndex{full: slotIndexSlots(capacity)}
	x.init(min(x.full, slotIndexSlots(min(capacity, tableStart))))
	return x
}

func (x *slotIndex) init(nslots int) {
	x.slots = make([]uint64, nslots)
	x.mask = uint64(nslots - 1)
	x.used = 0
}

// slotHash is a key's Fibonacci hash, a bijection of the uint64s: its top
// 32 bits are the tag.
func slotHash(k uint64) uint64 { return k * 0x9E3779B97F4A7C15 }

// home is the home table slot of a hash: its low bits once the top half
// is folded into them (the low bits of a product depend only on the low
// bits of the key). No entry is ever moved, so the home need not be
// recoverable from an entry, and a mask is cheaper than the variable shift
// of Fibonacci hashing proper (which on amd64 ties up CX).
func (x *slotIndex) home(h uint64) uint64 { return (h ^ h>>32) & x.mask }

// find returns the slot of k in keys; when k is absent it returns instead
// the free table slot where k's entry belongs, for putAt.
func (x *slotIndex) find(k uint64, keys []uint64) (slot int, free uint64, ok bool) {
	h := slotHash(k)
	tag := h & tagMask
	i := x.home(h)
	for {
		e := x.slots[i]
		if e == 0 {
			return 0, i, false
		}
		if e&tagMask == tag {
			if s := int(e&slotMask) - 1; keys[s] == k {
				return s, 0, true
			}
		}
		i = (i + 1) & x.mask
	}
}

// putAt records that key k, which find just reported absent at free, is
// now in slot s. The caller then calls needsRebuild (before the next find).
func (x *slotIndex) putAt(free uint64, k uint64, s int) {
	x.slots[free] = slotHash(k)&tagMask | uint64(s+1)
	x.used++
}

// needsRebuild reports whether the table has reached half full, when the
// next putAt must wait for a rebuild.
func (x *slotIndex) needsRebuild() bool { return 2*x.used >= len(x.slots) }

// rebuild clears the table, at its full size, and records each key of keys
// (distinct keys, keys[s] in slot s), dropping the stale entries.
func (x *slotIndex) rebuild(keys []uint64) {
	if len(x.slots) == x.full {
		clear(x.slots)
		x.used = 0
	} else {
		x.init(x.full)
	}
	x.putAll(keys)
}

// add records that key k, absent, is in slot s = len(keys) while the slot
// array keys fills (no slot replaced yet, so no stale entries), doubling
// the table first, up to its full size, when it would pass half full.
func (x *slotIndex) add(k uint64, keys []uint64) {
	if 2*(x.used+1) > len(x.slots) && len(x.slots) < x.full {
		x.init(2 * len(x.slots))
		x.putAll(keys)
	}
	x.put(k, len(keys))
}

// putAll records keys[s] in slot s for every s.
func (x *slotIndex) putAll(keys []uint64) {
	for s, k := range keys {
		x.put(k, s)
	}
}

// put records key k, absent from the table, in slot s.
func (x *slotIndex) put(k uint64, s int) {
	h := slotHash(k)
	i := x.home(h)
	for x.slots[i] != 0 {
		i = (i + 1) & x.mask
	}
	x.slots[i] = h&tagMask | uint64(s+1)
	x.used++
}

// bytes reports the table's memory.
func (x *slotIndex) bytes() int { return cap(x.slots) * 8 }
