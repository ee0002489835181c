package policy

// Scatter is the structure the paper recommends for a crawler's URL cache:
// CLOCK or RANDOM "implemented using a scatter table with circular chains".
// The k entries live in one fixed array that doubles as the clock's circle
// (or RANDOM's list): entry i holds a fingerprint and a 32-bit link whose
// low 31 bits name the next entry of its hash chain and whose top bit is
// the CLOCK mark. A bucket array of k rounded up to a power of two points
// at one entry of each chain; chains are circular, so an entry is unlinked
// by walking its own chain around to its predecessor, with no back links
// and no separate list of cache items. The arrays grow with the keys held
// (the bucket array doubles, and the chains are rebuilt, when the entries
// outnumber the buckets), so nothing is allocated once the cache is full.
//
// "clock-scatter" replaces entries exactly as [CLOCK] and "random-scatter"
// exactly as [Random] with the same seed, so their hits and misses match
// request for request; only the memory layout differs. It is not safe for
// concurrent use.
type Scatter struct {
	random bool
	size   int
	n      int
	hand   int
	shift  uint8
	keys   []uint64
	link   []uint32
	heads  []int32
	nb     int // buckets once full
	rng    splitmix
}

const (
	scatterMark = 1 << 31
	scatterNext = scatterMark - 1
)

var _ Policy = (*Scatter)(nil)

func scatterBuckets(size int) int {
	b := 1
	for b < size {
		b <<= 1
	}
	return b
}

// NewClockScatter returns an empty CLOCK cache of size >= 1 keys (at most
// 2^31-1) in a scatter table.
func NewClockScatter(size int) *Scatter { return newScatter("clock-scatter", size, false, 0) }

// NewRandomScatter returns an empty RANDOM cache of size >= 1 keys (at most
// 2^31-1) in a scatter table, drawing victims like [NewRandom] with seed.
func NewRandomScatter(size int, seed uint64) *Scatter {
	return newScatter("random-scatter", size, true, seed)
}

func newScatter(name string, size int, random bool, seed uint64) *Scatter {
	mustSize(name, size)
	if size > scatterNext {
		panic("policy: " + name + ": size must be below 2^31")
	}
	nb := scatterBuckets(size)
	c := &Scatter{
		random: random,
		size:   size,
		nb:     nb,
		keys:   make([]uint64, 0, startCap(size)),
		link:   make([]uint32, 0, startCap(size)),
		rng:    splitmix{seed},
	}
	c.rehash(min(nb, scatterBuckets(startCap(size))))
	return c
}

// rehash replaces the bucket array by one of nb buckets (a power of two)
// and rebuilds the chains of the entries held.
func (c *Scatter) rehash(nb int) {
	c.heads = make([]int32, nb)
	c.shift = 64
	for b := nb; b > 1; b >>= 1 {
		c.shift--
	}
	for i := range c.heads {
		c.heads[i] = -1
	}
	for e := range c.n {
		c.chain(e, c.keys[e])
	}
}

func (c *Scatter) bucket(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> c.shift }

func (c *Scatter) find(key uint64) (int, bool) {
	h := c.heads[c.bucket(key)]
	if h < 0 {
		return 0, false
	}
	e := uint32(h)
	for {
		if c.keys[e] == key {
			return int(e), true
		}
		e = c.link[e] & scatterNext
		if e == uint32(h) {
			return 0, false
		}
	}
}

// chain links entry e, holding key, into key's chain.
func (c *Scatter) chain(e int, key uint64) {
	b := c.bucket(key)
	h := c.heads[b]
	mark := c.link[e] & scatterMark
	if h < 0 {
		c.heads[b] = int32(e)
		c.link[e] = mark | uint32(e)
		return
	}
	c.link[e] = mark | c.link[h]&scatterNext
	c.link[h] = c.link[h]&scatterMark | uint32(e)
}

// unchain unlinks entry e from its chain.
func (c *Scatter) unchain(e int) {
	b := c.bucket(c.keys[e])
	p := uint32(e)
	for c.link[p]&scatterNext != uint32(e) {
		p = c.link[p] & scatterNext
	}
	if p == uint32(e) {
		c.heads[b] = -1
		return
	}
	c.link[p] = c.link[p]&scatterMark | c.link[e]&scatterNext
	if c.heads[b] == int32(e) {
		c.heads[b] = int32(p)
	}
}

// Access implements [Policy].
func (c *Scatter) Access(key uint64) bool {
	if e, ok := c.find(key); ok {
		if !c.random {
			c.link[e] |= scatterMark
		}
		return true
	}
	if c.n < c.size {
		e := c.n
		c.n++
		c.keys = grow(c.keys, c.n, c.size)
		c.link = grow(c.link, c.n, c.size)
		if c.n > len(c.heads) && len(c.heads) < c.nb {
			c.n-- // rehash the entries held before e
			c.rehash(min(2*len(c.heads), c.nb))
			c.n++
		}
		c.keys[e] = key
		c.link[e] = 0
		c.chain(e, key)
		return false
	}
	var v int
	if c.random {
		v = c.rng.intn(c.size)
	} else {
		v = c.hand
		for c.link[v]&scatterMark != 0 {
			c.link[v] &^= scatterMark
			v++
			if v == c.size {
				v = 0
			}
		}
		c.hand = v + 1
		if c.hand == c.size {
			c.hand = 0
		}
	}
	c.unchain(v)
	c.keys[v] = key
	c.link[v] &^= scatterMark
	c.chain(v, key)
	return false
}

// Name implements [Policy]: "clock-scatter" or "random-scatter".
func (c *Scatter) Name() string {
	if c.random {
		return "random-scatter"
	}
	return "clock-scatter"
}

// Len implements [Policy].
func (c *Scatter) Len() int { return c.n }

func (c *Scatter) memBytes() int { return cap(c.keys)*8 + cap(c.link)*4 + cap(c.heads)*4 }
