package policy

// slots is the fixed array of k cached keys, with a table from key to slot,
// that CLOCK, FIFO and RANDOM share: they differ only in which slot a miss
// replaces once the array is full. The array grows with the keys held, up
// to size. Not safe for concurrent use.
type slots struct {
	size int
	n    int // slots filled; the array fills in order before any eviction
	t    table
	keys []uint64
}

func newSlots(size int) slots {
	return slots{size: size, t: newTable(size), keys: make([]uint64, 0, startCap(size))}
}

// fill puts key in the next free slot and reports whether there was one.
func (s *slots) fill(key uint64) bool {
	if s.n >= s.size {
		return false
	}
	s.keys = grow(s.keys, s.n+1, s.size)
	s.keys[s.n] = key
	s.t.put(key, s.n)
	s.n++
	return true
}

// find returns the slot of key, or, when key is absent, where it belongs
// in the table (for replaceAt).
func (s *slots) find(key uint64) (slot int, free uint64, ok bool) { return s.t.find(key) }

// replaceAt evicts the key in slot i and puts key there. key is one that
// find just reported absent at free: it goes into that table slot before
// the victim's key is deleted (the deletion may shift it), which saves
// put's probe.
func (s *slots) replaceAt(i int, key uint64, free uint64) {
	s.t.putAt(free, key, i)
	s.t.del(s.keys[i])
	s.keys[i] = key
}

// next is the slot after i on the ring.
func (s *slots) next(i int) int {
	if i++; i == s.size {
		return 0
	}
	return i
}

func (s *slots) memBytes() int { return s.t.bytes() + cap(s.keys)*8 }
