package condense

// recentCache drops exact repeats of recently spilled URLs. It compares full
// strings, so it only ever drops a URL identical to one already spilled. The
// URL bytes live in one flat arena (slots of recentURLMax bytes), so the
// cache allocates nothing per URL; longer URLs are never cached.
type recentCache struct {
	fps   []uint64
	lens  []uint8
	arena []byte
}

const (
	recentBits   = 15
	recentURLMax = 120
)

func newRecentCache() *recentCache {
	return &recentCache{fps: make([]uint64, 1<<recentBits), lens: make([]uint8, 1<<recentBits),
		arena: make([]byte, (1<<recentBits)*recentURLMax)}
}

// seen reports whether u (with fingerprint fp) was the last URL stored in
// its slot, and stores it otherwise.
func (c *recentCache) seen(fp uint64, u string) bool {
	i := (fp ^ fp>>recentBits ^ fp>>(2*recentBits)) & (1<<recentBits - 1)
	slot := c.arena[int(i)*recentURLMax : int(i+1)*recentURLMax]
	if c.fps[i] == fp && c.lens[i] != 0 && int(c.lens[i]) == len(u) && string(slot[:len(u)]) == u {
		return true
	}
	if len(u) == 0 || len(u) > recentURLMax {
		return false
	}
	c.fps[i] = fp
	c.lens[i] = uint8(len(u))
	copy(slot, u)
	return false
}
