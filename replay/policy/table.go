package policy

import (
	"math/bits"
	"unsafe"

	"github.com/crawltrace/crawltrace/internal/hugemem"
)

// table is an open-addressing hash table from uint64 keys to non-negative
// int values: linear probing, Fibonacci hashing of the key (so small
// sequential keys spread as well as fingerprints, which are already hashes),
// and backward-shift deletion, so there are no tombstones and probe
// sequences never degrade. It holds at most half as many keys as slots and
// doubles when that would be exceeded; the policies give it their capacity
// (see tableStart) so it stops growing once the cache is full. Every key is a valid key, 0 included.
//
// A table is not safe for concurrent use.
type table struct {
	slots []tslot
	mask  uint64
	shift uint8
	n     int
	// huge puts slot arrays of a huge page or more on huge pages (see
	// internal/hugemem), in mem; [Index] sets it.
	huge bool
	mem  *hugemem.Block
}

// tslot is one table slot: 16 bytes. v holds value+1; v == 0 marks a free slot.
type tslot struct {
	key uint64
	v   uint64
}

// tableSlots is the number of slots a table sized for capacity keys gets:
// the smallest power of two holding twice the capacity, at least 8, or
// four times a capacity up to tableStart. Those small tables (256 KiB at
// most) stay in a core's caches, where what a lookup or deletion costs is
// its probe count and its mispredicted branches: at load 1/4 instead of
// 1/2 a miss probes 1.4 slots instead of 2.5 on average, and a deletion
// shifts fewer keys back.
func tableSlots(capacity int) int {
	load := 2
	if capacity <= tableStart {
		load = 4
	}
	n := 8
	for n < load*capacity {
		n <<= 1
	}
	return n
}

// tableBytes is the memory of a table sized for capacity keys.
func tableBytes(capacity int) int { return tableSlots(capacity) * 16 }

// tableStart caps a new table's initial capacity. Tables start at most
// this big and double as keys arrive, so a cache much larger than the
// number of distinct keys it ever sees only pays (and only touches memory)
// for the keys it holds; once full, its table has exactly
// tableSlots(capacity) slots and never resizes again.
const tableStart = 1 << 12

func newTable(capacity int) table {
	var t table
	t.init(tableSlots(min(capacity, tableStart)))
	return t
}

func (t *table) init(nslots int) {
	t.mem = nil
	if t.huge && nslots*16 >= hugemem.PageSize {
		t.mem = hugemem.Alloc(nslots * 16)
		if b := t.mem.Bytes(); t.mem.Mapped() {
			t.slots = unsafe.Slice((*tslot)(unsafe.Pointer(unsafe.SliceData(b))), nslots)
		} else {
			t.mem = nil
		}
	}
	if t.mem == nil {
		t.slots = make([]tslot, nslots)
	}
	t.mask = uint64(nslots - 1)
	t.shift = uint8(64 - bits.TrailingZeros(uint(nslots)))
	t.n = 0
}

func (t *table) home(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> t.shift }

// prefetch asks for k's home slot ahead of a lookup (see [prefetch]):
// prefetching the slots of keys a few requests ahead overlaps their cache
// misses with the work on the current request, which a lookup's dependent
// loads cannot do.
func (t *table) prefetch(k uint64) { prefetch(unsafe.Pointer(&t.slots[t.home(k)])) }

// len reports the number of keys held.
func (t *table) len() int { return t.n }

// get returns the value stored for k.
func (t *table) get(k uint64) (int, bool) {
	i := t.home(k)
	for {
		s := &t.slots[i]
		if s.v == 0 {
			return 0, false
		}
		if s.key == k {
			return int(s.v - 1), true
		}
		i = (i + 1) & t.mask
	}
}

// find returns the value stored for k; when k is absent it returns
// instead the free slot where k belongs, for putAt.
func (t *table) find(k uint64) (v int, free uint64, ok bool) {
	i := t.home(k)
	for {
		s := &t.slots[i]
		if s.v == 0 {
			return 0, i, false
		}
		if s.key == k {
			return int(s.v - 1), 0, true
		}
		i = (i + 1) & t.mask
	}
}

// putAt stores v (>= 0) for an absent key k in slot free, as find returned
// it with no put or del since. It never resizes: the table must have room
// for one more key than it holds, as a table sized for a full cache has
// (tableSlots leaves half the slots free), so a miss can insert its key
// before the victim's is deleted.
func (t *table) putAt(free uint64, k uint64, v int) {
	t.slots[free] = tslot{key: k, v: uint64(v) + 1}
	t.n++
}

// put stores v (>= 0) for k, replacing any previous value.
func (t *table) put(k uint64, v int) { t.swap(k, v) }

// swap stores v (>= 0) for k and returns the value it replaced, if any: a
// get and a put in one probe.
func (t *table) swap(k uint64, v int) (old int, ok bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(2 * len(t.slots))
	}
	i := t.home(k)
	for {
		s := &t.slots[i]
		if s.v == 0 {
			s.key, s.v = k, uint64(v)+1
			t.n++
			return 0, false
		}
		if s.key == k {
			old, s.v = int(s.v-1), uint64(v)+1
			return old, true
		}
		i = (i + 1) & t.mask
	}
}

// del removes k and reports whether it was present.
func (t *table) del(k uint64) bool {
	i := t.home(k)
	for {
		s := &t.slots[i]
		if s.v == 0 {
			return false
		}
		if s.key == k {
			break
		}
		i = (i + 1) & t.mask
	}
	// Backward shift: pull later members of the probe run into the hole
	// when their home position allows it.
	j := i
	for {
		j = (j + 1) & t.mask
		s := t.slots[j]
		if s.v == 0 {
			break
		}
		h := t.home(s.key)
		if (j-h)&t.mask >= (j-i)&t.mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = tslot{}
	t.n--
	return true
}

func (t *table) resize(nslots int) {
	old, oldMem := t.slots, t.mem
	t.init(nslots)
	if oldMem != nil {
		defer oldMem.Free()
	}
	for _, s := range old {
		if s.v != 0 {
			i := t.home(s.key)
			for t.slots[i].v != 0 {
				i = (i + 1) & t.mask
			}
			t.slots[i] = s
			t.n++
		}
	}
}

// bytes reports the table's memory.
func (t *table) bytes() int { return cap(t.slots) * 16 }
