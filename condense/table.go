package condense

import "unsafe"

// firstSeen is the map side's exact filter of repeats: a table, indexed by
// fingerprint, of where the first occurrence of each recent URL is kept (an
// offset into an arena of URL bytes). A repeat is dropped after one
// comparison of the full string, so only a URL identical to one already
// spilled is ever dropped; a URL whose fingerprint is in the table with a
// different string (a collision, or a table evicted since) is spilled.
//
// Memory is fixed at construction. The table keeps two generations: when
// the current one is full the older one is dropped, and a hit in the older
// one is copied into the current one, so URLs in use stay.
type firstSeen struct {
	cur, old *generation
}

type generation struct {
	slots []slot
	arena []byte // URL bytes, back to back
	n     int    // entries
	mask  uint64
	shift uint
}

// slot is one table entry: fingerprint, where the URL is in the arena and
// its length, in one cache line access.
type slot struct {
	fp  uint64
	off uint32 // arena offset + 1; 0 marks an empty slot
	n   uint32
}

// firstSeenEntry is the bytes one entry costs beyond its URL: two slots at
// a load of one half.
const firstSeenEntry = 2 * 16

// newFirstSeen returns a table using about budget bytes, for URLs of about
// avgURL bytes.
func newFirstSeen(budget int64, avgURL int) *firstSeen {
	per := int64(firstSeenEntry + avgURL)
	entries := max(budget/2/per, 1024) // per generation
	slots := uint64(1)
	for slots < uint64(entries)*2 {
		slots <<= 1
	}
	mk := func() *generation {
		shift := uint(64)
		for s := slots; s > 1; s >>= 1 {
			shift--
		}
		return &generation{slots: make([]slot, slots),
			arena: make([]byte, 0, min(entries*int64(avgURL), 1<<32-2)), mask: slots - 1, shift: shift}
	}
	return &firstSeen{cur: mk(), old: mk()}
}

func (g *generation) slot(fp uint64) uint64 { return (fp * 0x9E3779B97F4A7C15) >> g.shift }

// find reports whether fp is in the table and whether u is the URL stored
// with it, and returns fp's slot (the empty slot where fp would go when
// absent).
func (g *generation) find(fp uint64, u string) (slotIdx uint64, found, same bool) {
	for i := g.slot(fp); ; i = (i + 1) & g.mask {
		s := &g.slots[i]
		if s.off == 0 {
			return i, false, false
		}
		if s.fp == fp {
			off := int(s.off - 1)
			return i, true, int(s.n) == len(u) && string(g.arena[off:off+len(u)]) == u
		}
	}
}

// full reports whether u would not fit.
func (g *generation) full(u string) bool {
	return uint64(g.n+1)*2 > g.mask+1 || len(g.arena)+len(u) > cap(g.arena)
}

func (g *generation) put(i, fp uint64, u string) {
	off := len(g.arena)
	g.arena = append(g.arena, u...)
	g.slots[i] = slot{fp: fp, off: uint32(off + 1), n: uint32(len(u))}
	g.n++
}

func (g *generation) reset() {
	clear(g.slots)
	g.arena = g.arena[:0]
	g.n = 0
}

// seen reports whether u, with fingerprint fp, is in the table, and adds it
// when it is not (and its fingerprint is not there with another URL).
func (t *firstSeen) seen(fp uint64, u string) bool {
	i, found, same := t.cur.find(fp, u)
	if found {
		return same
	}
	_, found, same = t.old.find(fp, u)
	if found && !same {
		return false
	}
	t.add(i, fp, u)
	return found
}

func (t *firstSeen) add(i, fp uint64, u string) {
	if t.cur.full(u) {
		t.cur, t.old = t.old, t.cur
		t.cur.reset()
		i, _, _ = t.cur.find(fp, u)
		if t.cur.full(u) {
			return // u alone is larger than a generation
		}
	}
	t.cur.put(i, fp, u)
}

// clear empties the table (between nodes: counts are per node).
func (t *firstSeen) clear() {
	t.cur.reset()
	t.old.reset()
}

// slotAddrs and urlAddrs append, for each fingerprint, the addresses of
// its slots in both generations and, for each generation whose slot holds
// that fingerprint, of the first and last bytes of its URL, for
// prefetch.Addrs: the cache misses of a block of lookups then overlap
// instead of each lookup waiting for its own. The map loop prefetches slots
// two blocks ahead and URLs one block ahead, so that urlAddrs finds the
// slots it reads in cache. Prefetching changes nothing but timing.
func (t *firstSeen) slotAddrs(fps []uint64, out []uintptr) []uintptr {
	g, o := t.cur, t.old
	gb, ob := uintptr(unsafe.Pointer(unsafe.SliceData(g.slots))), uintptr(unsafe.Pointer(unsafe.SliceData(o.slots)))
	for _, fp := range fps {
		out = append(out, gb+uintptr(g.slot(fp))*slotSize, ob+uintptr(o.slot(fp))*slotSize)
	}
	return out
}

func (t *firstSeen) urlAddrs(fps []uint64, out []uintptr) []uintptr {
	for _, g := range [2]*generation{t.cur, t.old} {
		ab := uintptr(unsafe.Pointer(unsafe.SliceData(g.arena)))
		for _, fp := range fps {
			s := &g.slots[g.slot(fp)]
			if s.fp == fp && s.off != 0 && s.n != 0 {
				// The URL may span two cache lines.
				out = append(out, ab+uintptr(s.off-1), ab+uintptr(s.off-1+s.n-1))
			}
		}
	}
	return out
}

const slotSize = unsafe.Sizeof(slot{})
