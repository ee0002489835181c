package policy

import "math/bits"

// cmSketch is a count-min sketch of 4-bit counters for W-TinyLFU: 4 rows
// of w counters (w a power of two, at least the cache size and 16), 16
// counters packed per uint64. A key's counter in row r is chosen by double
// hashing, h1 + r*h2, of two SplitMix64 finalizations of the key. Counters
// saturate at 15. After sample = 10 x cache size increments that raised at
// least one counter, every counter is halved (the TinyLFU "reset") and the
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
	w := 16
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
// in a sketch whose rows have 1<<rowBits counters.
func sketchIndexes(key uint64, rowBits uint8) [4]int {
	h1 := mix64(key + 0x9E3779B97F4A7C15)
	h2 := mix64(h1^0xC3A5C85C97CB3127) | 1
	var idx [4]int
	for r := range idx {
		idx[r] = r<<rowBits + int((h1+uint64(r)*h2)>>(64-rowBits))
	}
	return idx
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
