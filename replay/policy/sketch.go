package policy

import "math/bits"

// cmSketch is a count-min sketch of 4-bit counters for W-TinyLFU: 4 rows
// of w counters (w a power of two, at least the cache size and 32), 16
// counters packed per uint64. It is blocked, as Caffeine's is, so that one
// request touches one 64-byte cache line instead of four: the counters are
// laid out in blocks of 128 (32 per row), a key's block is chosen by the
// high bits of a SplitMix64 finalization of the key, and its counter in
// row r by 5 low bits (r*5 .. r*5+4) of the same hash. Counters saturate
// at 15. After sample = 10 x cache size increments that raised at least
// one counter, every counter is halved (the TinyLFU "reset") and the
// increment count halves too.
//
// A cmSketch is not safe for concurrent use.
type cmSketch struct {
	words     []uint64
	rowBits   uint8
	additions int
	sample    int
}

func sketchWidth(size int) int {
	w := 32
	for w < size {
		w <<= 1
	}
	return w
}

// sketchBytes is the memory of the sketch for a cache of size keys.
func sketchBytes(size int) int { return 4 * sketchWidth(size) / 2 }

func newSketch(size int) cmSketch {
	w := sketchWidth(size)
	return cmSketch{
		words:   make([]uint64, 4*w/16),
		rowBits: uint8(bits.TrailingZeros(uint(w))),
		sample:  10 * size,
	}
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// sketchIndexes returns the absolute counter positions of key, one per row,
// in a sketch whose rows have 1<<rowBits counters (rowBits >= 5).
func sketchIndexes(key uint64, rowBits uint8) [4]int {
	h := mix64(key + 0x9E3779B97F4A7C15)
	base := 0
	if blockBits := rowBits - 5; blockBits > 0 {
		base = int(h>>(64-blockBits)) * 128
	}
	return [4]int{
		base + int(h&31),
		base + 32 + int((h>>5)&31),
		base + 64 + int((h>>10)&31),
		base + 96 + int((h>>15)&31),
	}
}

func (s *cmSketch) increment(key uint64) {
	added := false
	for _, loc := range sketchIndexes(key, s.rowBits) {
		w := &s.words[loc>>4]
		sh := uint(loc&15) * 4
		if (*w>>sh)&15 < 15 {
			*w += 1 << sh
			added = true
		}
	}
	if added {
		s.additions++
		if s.additions >= s.sample {
			for i, w := range s.words {
				s.words[i] = (w >> 1) & 0x7777777777777777
			}
			s.additions /= 2
		}
	}
}

func (s *cmSketch) estimate(key uint64) int {
	m := 15
	for _, loc := range sketchIndexes(key, s.rowBits) {
		m = min(m, int(s.words[loc>>4]>>(uint(loc&15)*4))&15)
	}
	return m
}
