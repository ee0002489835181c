package fingerprint

import "github.com/cespare/xxhash/v2"

// AppendOffsets appends to dst the fingerprints of the strings
// data[offsets[i]:offsets[i+1]], for i from 0 to len(offsets)-2, the
// layout of an Arrow string column, and returns the extended slice. Its
// answers are h.String's; it is faster on many strings at once. Where
// the CPU has AVX-512 (F and DQ), the default seed hashes eight strings
// at a time, one in each 64-bit lane; otherwise, and for strings shorter
// than 8 bytes, it hashes one at a time. It panics, as slicing data
// would, if the offsets are not non-decreasing or are out of data's
// bounds.
func (h Hasher) AppendOffsets(dst []uint64, data []byte, offsets []int32) []uint64 {
	n := len(offsets) - 1
	if n <= 0 {
		return dst
	}
	// The panic slicing gives, if the ends are out of bounds. Every
	// group the lanes hash has lengths ≥ 8, so its offsets lie between
	// these two; a decreasing pair elsewhere panics when sliced.
	_ = data[offsets[0]:offsets[n]:len(data)]
	start := len(dst)
	dst = append(dst, make([]uint64, n)...)
	out := dst[start:]
	i := 0
	if h.seed == 0 && useLanes {
		for i+lanes <= n {
			done := lanes * sum64Lanes(data, offsets[i:], out[i:], (n-i)/lanes)
			i += done
			if i+lanes > n {
				break
			}
			// The group at i has a string shorter than 8 bytes (or
			// offsets out of order, which slicing reports).
			for j := i; j < i+lanes; j++ {
				out[j] = xxhash.Sum64(data[offsets[j]:offsets[j+1]])
			}
			i += lanes
		}
	}
	if h.seed == 0 {
		for ; i < n; i++ {
			out[i] = xxhash.Sum64(data[offsets[i]:offsets[i+1]])
		}
	} else {
		d := xxhash.NewWithSeed(h.seed)
		for ; i < n; i++ {
			d.ResetWithSeed(h.seed)
			d.Write(data[offsets[i]:offsets[i+1]])
			out[i] = d.Sum64()
		}
	}
	if h.mask != ^uint64(0) {
		for j := range out {
			out[j] &= h.mask
		}
	}
	return dst
}
