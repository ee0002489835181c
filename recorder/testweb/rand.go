package testweb

import "math"

// rng is a splitmix64 generator: a few nanoseconds per draw, a value type
// that lives on the stack, so every page can own one seeded from (seed,
// host, page) without locks or allocations. Not safe for concurrent use.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return fmix(r.s)
}

// fmix is the splitmix64 output function, a bijective 64-bit mixer.
func fmix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// hash combines values into one well-mixed 64-bit value.
func hash(a, b, c, d uint64) uint64 {
	h := fmix(a + 0x9e3779b97f4a7c15)
	h = fmix(h ^ (b + 0x632be59bd9b4e019))
	h = fmix(h ^ (c + 0x8cb92ba72f3d8dd7))
	return fmix(h ^ (d + 0x2545f4914f6cdd1d))
}

// unit maps a 64-bit value to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return unit(r.next()) }

// intn returns a uniform value in [0, n); n must be in (0, 2^32).
func (r *rng) intn(n int) int { return int(((r.next() >> 32) * uint64(n)) >> 32) }

// norm returns a standard normal value (Box-Muller).
func (r *rng) norm() float64 {
	u := 1 - r.float() // (0, 1]
	v := r.float()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// zipfTable samples ranks 0..n-1 with P(rank r) proportional to 1/(r+1)^s.
// Read-only after construction; safe for concurrent use.
type zipfTable struct{ cdf []float64 }

func newZipf(n int, s float64) *zipfTable {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return &zipfTable{cdf: cdf}
}

// sample maps u in [0, 1) to a rank.
func (z *zipfTable) sample(u float64) int {
	lo, hi := 0, len(z.cdf)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if z.cdf[m] <= u {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
