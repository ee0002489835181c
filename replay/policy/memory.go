package policy

import "strings"

// MemoryPerEntry estimates the bytes each policy's data structures take per
// cached key when it is full: it holds size keys and, for the policies that
// remember evicted keys (s3fifo, arc, 2q), as many of those as it can (for
// "infinite": when it holds size distinct keys). The estimate comes from the
// sizes the structures reach when full; they start small and double up to
// that size, so a cache that sees fewer distinct keys than it could hold
// uses less (what [Bytes] measures). It returns 0 for an
// unknown name or a size below 1. Go object headers and the Policy struct
// itself (a few dozen bytes) are left out, and so is MIN's next-use array,
// which costs 8 bytes per request of the trace rather than per key. The
// arithmetic, with T(n) = 16 x (smallest power of two >= 2n, at least 8)
// for the hash table of n keys (16-byte slots, load <= 1/2), and
// N(l, n) = 24 x (l + n) for a slab of n 24-byte list nodes plus l
// sentinels:
//
//	infinite        T(max(size, 4096))
//	min             T(size) + 16 size (nodes: key, heap index) + 16 size (heap: next use, node)
//	lru             T(size) + 16 (size+1) (nodes: key, prev, next)
//	clock           T(size) + 8 size (keys) + 1 size (mark bytes)
//	fifo            T(size) + 8 size (keys)
//	random          8 size (keys) + X(size) up to 2^18 keys, T(size) + 8 size above,
//	                X(n) = 8 x (smallest power of two >= 4n, at least 8)
//	                for its slot index (8-byte entries, live ones <= 1/4)
//	static          T(size) (plus 1 byte per key with ChargeStaticLoads)
//	sieve           T(size) + N(1, size)
//	s3fifo          T(size + g) + N(3, size + g), g = 9 size/10 ghosts
//	arc             T(2 size) + N(4, 2 size)
//	2q              T(size + kout) + N(3, size + kout), kout = max(1, size/2)
//	wtinylfu        T(size) + N(3, size) + 2 w, w = max(32, size rounded up to a power of two)
//	clock-scatter,
//	random-scatter  8 size (keys) + 4 size (links and marks) + 4 b, b = size rounded up to a power of two
//
// The result is the total divided by size.
func MemoryPerEntry(name string, size int) float64 {
	if size < 1 {
		return 0
	}
	var b int
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "infinite":
		b = tableBytes(max(size, tableStart))
	case "min":
		b = tableBytes(size) + 32*size
	case "lru":
		b = tableBytes(size) + 16*(size+1)
	case "clock":
		b = tableBytes(size) + 9*size
	case "fifo":
		b = tableBytes(size) + 8*size
	case "random":
		if size <= randomIndexMax {
			b = slotIndexBytes(size) + 8*size
		} else {
			b = tableBytes(size) + 8*size
		}
	case "static":
		b = tableBytes(size)
	case "sieve":
		b = tableBytes(size) + slabBytes(1, size)
	case "s3fifo":
		_, _, g := s3fifoSizes(size)
		b = tableBytes(size+g) + slabBytes(3, size+g)
	case "arc":
		b = tableBytes(2*size) + slabBytes(4, 2*size)
	case "2q":
		_, kout := twoqSizes(size)
		b = tableBytes(size+kout) + slabBytes(3, size+kout)
	case "wtinylfu":
		b = tableBytes(size) + slabBytes(3, size) + sketchBytes(size)
	case "clock-scatter", "random-scatter":
		b = 12*size + 4*scatterBuckets(size)
	default:
		return 0
	}
	return float64(b) / float64(size)
}

// Bytes is the memory p's data structures take now (with the same
// exclusions as [MemoryPerEntry]): they grow with the keys held, so a cache
// far larger than its trace's distinct keys costs what those keys cost. It
// returns 0 for a Policy of another package.
func Bytes(p Policy) int {
	if m, ok := p.(interface{ memBytes() int }); ok {
		return m.memBytes()
	}
	return 0
}
