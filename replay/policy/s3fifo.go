package policy

// S3FIFO is S3-FIFO from Yang et al., "FIFO queues are all you need for
// cache eviction" (SOSP 2023), with the semantics of libCacheSim's
// S3FIFO.c for unit-size objects:
//
//   - a small FIFO S of k/10 keys (at least 1), a main FIFO M of the other
//     k - |S| keys, and a ghost FIFO G of 9k/10 evicted keys (ghost size
//     ratio 0.9, which is |M| rounded); each cached key has a 2-bit
//     frequency counter, incremented on a hit and capped at 3;
//   - a miss whose key is in G leaves G and enters M; any other miss enters
//     S, except that until the first eviction a miss that finds S full
//     enters M (libCacheSim's "has_evicted" rule); new keys have frequency 0;
//   - to make room, evict from M if M holds more than its share or S is
//     empty, else from S. Evicting from S walks its tail: a key with
//     frequency >= 2 moves to the head of M with frequency 0, the first key
//     with less is dropped into G (G's oldest key leaves when G is full);
//   - evicting from M walks its tail: a key with frequency f > 0 goes back
//     to the head with f-1, the first key with 0 is evicted.
//
// Departures from libCacheSim, both for unit sizes: |S| is at least 1
// (libCacheSim refuses to insert an object as large as S, which for unit
// objects means caches under 20 keys never admit anything), and sizes use
// integer division instead of floating-point ratios. It is not safe for
// concurrent use.
type S3FIFO struct {
	size, small, main, ghost int
	evicted                  bool
	t                        table
	s                        slab
}

const (
	s3Small uint8 = iota
	s3Main
	s3Ghost
)

var _ Policy = (*S3FIFO)(nil)

// s3fifoSizes returns the small, main and ghost queue sizes for k keys.
func s3fifoSizes(k int) (small, main, ghost int) {
	small = max(1, k/10)
	return small, k - small, k * 9 / 10
}

// NewS3FIFO returns an empty S3-FIFO cache of size >= 1 keys.
func NewS3FIFO(size int) *S3FIFO {
	mustSize("s3fifo", size)
	s, m, g := s3fifoSizes(size)
	return &S3FIFO{size: size, small: s, main: m, ghost: g, t: newTable(size + g), s: newSlab(3, size+g)}
}

// Access implements [Policy].
func (c *S3FIFO) Access(key uint64) bool {
	ghostHit := false
	if v, ok := c.t.get(key); ok {
		n := &c.s.nodes[v]
		if n.list != s3Ghost {
			if n.freq < 3 {
				n.freq++
			}
			return true
		}
		ghostHit = true
		c.s.unlink(int32(v))
		c.s.release(int32(v))
		c.t.del(key)
	}
	for c.s.lens[s3Small]+c.s.lens[s3Main] >= c.size {
		c.evict()
	}
	i := c.s.alloc(key)
	switch {
	case ghostHit:
		c.s.pushFront(s3Main, i)
	case !c.evicted && c.s.lens[s3Small] >= c.small:
		c.s.pushFront(s3Main, i)
	default:
		c.s.pushFront(s3Small, i)
	}
	c.t.put(key, int(i))
	return false
}

func (c *S3FIFO) evict() {
	c.evicted = true
	if c.s.lens[s3Main] > c.main || c.s.lens[s3Small] == 0 {
		c.evictMain()
	} else {
		c.evictSmall()
	}
}

func (c *S3FIFO) evictSmall() {
	for c.s.lens[s3Small] > 0 {
		o := c.s.back(s3Small)
		if c.s.nodes[o].freq >= 2 {
			c.s.nodes[o].freq = 0
			c.s.moveToFront(s3Main, o)
			continue
		}
		if c.ghost == 0 {
			c.s.unlink(o)
			c.t.del(c.s.nodes[o].key)
			c.s.release(o)
			return
		}
		if c.s.lens[s3Ghost] >= c.ghost {
			g := c.s.back(s3Ghost)
			c.s.unlink(g)
			c.t.del(c.s.nodes[g].key)
			c.s.release(g)
		}
		c.s.nodes[o].freq = 0
		c.s.moveToFront(s3Ghost, o)
		return
	}
}

func (c *S3FIFO) evictMain() {
	for c.s.lens[s3Main] > 0 {
		o := c.s.back(s3Main)
		if f := c.s.nodes[o].freq; f > 0 {
			c.s.nodes[o].freq = f - 1
			c.s.moveToFront(s3Main, o)
			continue
		}
		c.s.unlink(o)
		c.t.del(c.s.nodes[o].key)
		c.s.release(o)
		return
	}
}

// Name implements [Policy].
func (c *S3FIFO) Name() string { return "s3fifo" }

// Len implements [Policy].
func (c *S3FIFO) Len() int { return c.s.lens[s3Small] + c.s.lens[s3Main] }

func (c *S3FIFO) memBytes() int { return c.t.bytes() + c.s.bytes() }
