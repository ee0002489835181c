package policy

// Index is the open-addressing table from uint64 keys to non-negative ints
// that the policies use, exported for the replay engine's one-pass curves.
// It grows as keys arrive, up to the capacity it was made for. It is not
// safe for concurrent use.
type Index struct{ t table }

// NewIndex returns an empty index sized to hold up to capacity keys without
// resizing once full (it starts small and doubles as keys arrive).
// Once it outgrows a huge page (2 MiB, 131,072 slots), its slots are on
// huge pages where the kernel offers them (see internal/hugemem): a
// one-pass curve looks keys up at random in a table of up to a gigabyte,
// and on small pages each lookup would also miss the TLB.
func NewIndex(capacity int) *Index {
	x := &Index{t: table{huge: true}}
	x.t.init(tableSlots(min(capacity, tableStart)))
	return x
}

// Get returns the value stored for k.
func (x *Index) Get(k uint64) (int, bool) { return x.t.get(k) }

// Put stores v (>= 0) for k, replacing any previous value.
func (x *Index) Put(k uint64, v int) { x.t.put(k, v) }

// Delete removes k and reports whether it was present.
func (x *Index) Delete(k uint64) bool { return x.t.del(k) }

// Len is the number of keys held.
func (x *Index) Len() int { return x.t.len() }

// Prefetch asks the processor for k's home slot ahead of a lookup of k
// (see [table.prefetch]): a caller that knows the keys to come can overlap
// their cache misses with the work on the current one. It changes nothing
// but timing.
func (x *Index) Prefetch(k uint64) { x.t.prefetch(k) }

// Large reports whether the index has outgrown a core's caches, the size
// from which the policies prefetch (a table that fits in the caches only
// pays for the prefetch instructions).
func (x *Index) Large() bool { return len(x.t.slots) >= prefetchSlots }

// Swap stores v (>= 0) for k and returns the value it replaced, if any: a
// Get and a Put in one probe.
func (x *Index) Swap(k uint64, v int) (old int, ok bool) { return x.t.swap(k, v) }

// NewIndexSized returns an empty index with room for capacity keys from
// the start, for a caller that knows how many it will hold: it never
// resizes (growing rehashes every key each time the table doubles).
func NewIndexSized(capacity int) *Index {
	x := &Index{t: table{huge: true}}
	x.t.init(tableSlots(capacity))
	return x
}

// Remap replaces every value v held with f(v), in one sequential pass over
// the table (the keys stay where they are).
func (x *Index) Remap(f func(v int) int) {
	for i := range x.t.slots {
		if s := &x.t.slots[i]; s.v != 0 {
			s.v = uint64(f(int(s.v-1))) + 1
		}
	}
}
