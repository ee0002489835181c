package policy

import "math/bits"

// splitmix is the SplitMix64 generator (Steele, Lea & Flood 2014): tiny,
// fast, and fully determined by its seed, so a replay with a given
// Options.Seed evicts the same victims on every platform and Go version.
//
// A splitmix is not safe for concurrent use.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// intn returns a uniform integer in [0, n), n > 0, by Lemire's
// multiply-and-reject method (unbiased).
func (r *splitmix) intn(n int) int {
	un := uint64(n)
	hi, lo := bits.Mul64(r.next(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), un)
		}
	}
	return int(hi)
}
