package condense

import (
	"unsafe"
)

// firstSeen is the map side's exact filter of repeats: a table, indexed by
// fingerprint, of where a copy of each recent URL is kept in a ring of URL
// bytes. A repeat is dropped only after one comparison of its full string
// with an intact copy, and every copy is of a URL the filter answered
// false for (so it was spilled): only a URL identical to one already
// spilled is ever dropped. A URL whose fingerprint is in the table with a
// different string (a collision), or whose copy the ring has overwritten
// since, is spilled again.
//
// Memory is fixed at construction. The table is an array of buckets of
// four entries, one cache line each; the ring is written in order and
// overwrites its oldest copies, and a bucket that is full replaces the
// entry whose copy is oldest. A hit on a copy in the older half of the
// ring writes the URL again at the head, so URLs in use stay. A lookup
// thus touches one line of the table and the one or two lines of one copy.
type firstSeen struct {
	buckets []bucket
	shift   uint
	ring    []byte
	mask    uint64 // len(ring) - 1
	head    uint64 // ring position of the next copy, counting every lap
}

// bucket is four entries: one cache line.
type bucket [4]entrySlot

// entrySlot is a fingerprint and where its copy is: ring position << 16 |
// length (0: empty). Positions count every byte ever copied, so 48 bits
// last for 256 TiB of copies per worker.
type entrySlot struct {
	fp  uint64
	ref uint64
}

const (
	bucketSize = unsafe.Sizeof(bucket{})
	maxCopy    = 1<<16 - 1 // longer URLs are not kept (always spilled)
)

// newFirstSeen returns a table of at most about budget bytes, for URLs of
// about avgURL bytes: the ring is the largest power of two within two thirds
// of it, and the buckets hold two entries for every URL the ring holds.
func newFirstSeen(budget int64, avgURL int) *firstSeen {
	ringBytes := uint64(4 << 10)
	for ringBytes*2 <= uint64(budget)*2/3 {
		ringBytes *= 2
	}
	nb := uint64(16)
	for nb*4 < 2*ringBytes/uint64(max(avgURL, 1)) {
		nb *= 2
	}
	shift := uint(64)
	for s := nb; s > 1; s >>= 1 {
		shift--
	}
	// Ring positions start at one lap so that position 0 never looks
	// intact.
	return &firstSeen{buckets: make([]bucket, nb), shift: shift, ring: make([]byte, ringBytes), mask: ringBytes - 1, head: ringBytes}
}

func (t *firstSeen) bucket(fp uint64) *bucket {
	return &t.buckets[(fp*0x9E3779B97F4A7C15)>>t.shift]
}

// intact reports whether the copy at ring position pos has not been
// overwritten: the ring has advanced less than one lap past it.
func (t *firstSeen) intact(pos uint64) bool { return t.head <= pos+t.mask+1 }

// seen reports whether u, with fingerprint fp, is kept, and keeps it when
// it is not.
func (t *firstSeen) seen(fp uint64, u string) bool {
	b := t.bucket(fp)
	victim, oldest := -1, ^uint64(0)
	for k := range b {
		e := &b[k]
		if e.ref == 0 {
			if victim < 0 || oldest != 0 {
				victim, oldest = k, 0
			}
			continue
		}
		pos, n := e.ref>>16, int(e.ref&0xffff)
		if !t.intact(pos) {
			if oldest != 0 {
				victim, oldest = k, 0
			}
			continue
		}
		if e.fp == fp && n == len(u) {
			off := pos & t.mask
			if string(t.ring[off:off+uint64(n)]) == u {
				if t.head-pos > (t.mask+1)/2 {
					// In the older half: copy it again so it stays.
					e.ref = t.copy(u)
				}
				return true
			}
		}
		if oldest != 0 && pos < oldest {
			victim, oldest = k, pos
		}
	}
	if len(u) <= maxCopy && uint64(len(u)) <= t.mask+1 {
		b[victim] = entrySlot{fp: fp, ref: t.copy(u)}
	}
	return false
}

// copy writes u at the head of the ring (not across its end) and returns
// its entry reference.
func (t *firstSeen) copy(u string) uint64 {
	n := uint64(len(u))
	if off := t.head & t.mask; off+n > t.mask+1 {
		t.head += t.mask + 1 - off
	}
	pos := t.head
	copy(t.ring[pos&t.mask:], u)
	t.head += n
	return pos<<16 | n
}

// clear empties the table (between nodes: counts are per node). The ring
// keeps its bytes; no entry points at them.
func (t *firstSeen) clear() {
	clear(t.buckets)
}

// slotAddrs and urlAddrs append, for each fingerprint, the address of its
// bucket and, when its bucket holds that fingerprint, of the first and last
// bytes of its copy, for prefetch.Addrs: the cache misses of a block of
// lookups then overlap instead of each lookup waiting for its own. The map
// loop prefetches buckets two blocks ahead and copies one block ahead, so
// that urlAddrs finds the buckets it reads in cache. Prefetching changes
// nothing but timing.
func (t *firstSeen) slotAddrs(fps []uint64, out []uintptr) []uintptr {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(t.buckets)))
	for _, fp := range fps {
		out = append(out, base+uintptr((fp*0x9E3779B97F4A7C15)>>t.shift)*bucketSize)
	}
	return out
}

func (t *firstSeen) urlAddrs(fps []uint64, out []uintptr) []uintptr {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(t.ring)))
	for _, fp := range fps {
		b := t.bucket(fp)
		for k := range b {
			if e := b[k]; e.fp == fp && e.ref != 0 {
				off, n := uintptr((e.ref>>16)&t.mask), uintptr(e.ref&0xffff)
				// The copy may span two cache lines.
				out = append(out, base+off, base+off+max(n, 1)-1)
				break
			}
		}
	}
	return out
}
