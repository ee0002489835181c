// Package fingerprint maps URLs to the 64-bit fingerprints that condensed
// traces hold.
//
// The fingerprint of a URL is xxHash64 (github.com/cespare/xxhash/v2) with
// seed 0 of the URL's bytes exactly as logged in the raw trace: the
// normalized URL string, with no further processing. Traces written to disk
// depend on this function, so its known answers are pinned in the tests.
//
// [Hasher.AppendOffsets] fingerprints the strings of an Arrow string
// column many at a time, with the same answers: eight at once in AVX-512
// lanes where the CPU has them (amd64 with AVX-512 F and DQ).
//
// For experiments the [Hasher] also takes another seed, and can truncate
// fingerprints to b < 64 bits, which makes collisions frequent enough to
// test the collision checks of the condenser.
package fingerprint

import (
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"
)

// URL returns the 64-bit fingerprint of u: xxHash64, seed 0.
func URL(u string) uint64 { return xxhash.Sum64String(u) }

// Bytes returns the 64-bit fingerprint of b: xxHash64, seed 0.
func Bytes(b []byte) uint64 { return xxhash.Sum64(b) }

// Hasher computes fingerprints with a given seed and width. The zero value
// is not valid; use [New]. A Hasher is immutable and safe for concurrent use.
type Hasher struct {
	seed uint64
	bits uint
	mask uint64
}

// Default is the hasher of [URL]: seed 0, 64 bits.
var Default = Hasher{bits: 64, mask: math.MaxUint64}

// New returns a hasher with the given seed whose fingerprints keep the low
// bits bits (1..64).
func New(seed uint64, bits int) (Hasher, error) {
	if bits < 1 || bits > 64 {
		return Hasher{}, fmt.Errorf("fingerprint: bits must be in 1..64, got %d", bits)
	}
	h := Hasher{seed: seed, bits: uint(bits), mask: math.MaxUint64}
	if bits < 64 {
		h.mask = 1<<uint(bits) - 1
	}
	return h, nil
}

// Bits is the fingerprint width.
func (h Hasher) Bits() int { return int(h.bits) }

// Seed is the hash seed.
func (h Hasher) Seed() uint64 { return h.seed }

// String fingerprints s.
func (h Hasher) String(s string) uint64 {
	if h.seed == 0 {
		return xxhash.Sum64String(s) & h.mask
	}
	d := xxhash.NewWithSeed(h.seed)
	d.WriteString(s)
	return d.Sum64() & h.mask
}

// ExpectedCollisions is the expected number of colliding pairs among n
// distinct items hashed uniformly to b bits: n(n-1)/2^(b+1).
func ExpectedCollisions(n float64, bits int) float64 {
	return n * (n - 1) / math.Exp2(float64(bits)+1)
}
