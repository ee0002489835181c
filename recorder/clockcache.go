package recorder

// clockCache is a set of fingerprints of fixed capacity with CLOCK
// replacement (a mark bit per slot; a hit sets it; on a miss the hand clears
// marks until it finds an unmarked slot, which is evicted). It sits in front
// of the peer sends of the host splitter: a URL found in it was sent to its
// owner recently and is not sent again. Not safe for concurrent use.
type clockCache struct {
	fps   []uint64
	mark  []bool
	index map[uint64]int32
	hand  int
}

func newClockCache(size int) *clockCache {
	return &clockCache{fps: make([]uint64, 0, size), mark: make([]bool, size), index: make(map[uint64]int32, size)}
}

// access reports whether fp was cached, and caches it.
func (c *clockCache) access(fp uint64) bool {
	if i, ok := c.index[fp]; ok {
		c.mark[i] = true
		return true
	}
	if len(c.fps) < cap(c.fps) {
		c.index[fp] = int32(len(c.fps))
		c.fps = append(c.fps, fp)
		return false
	}
	for c.mark[c.hand] {
		c.mark[c.hand] = false
		c.hand++
		if c.hand == len(c.fps) {
			c.hand = 0
		}
	}
	delete(c.index, c.fps[c.hand])
	c.fps[c.hand] = fp
	c.index[fp] = int32(c.hand)
	c.hand++
	if c.hand == len(c.fps) {
		c.hand = 0
	}
	return false
}
