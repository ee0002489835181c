package policy

// WTinyLFU is W-TinyLFU from Einziger, Friedman & Manes, "TinyLFU: A
// Highly Efficient Cache Admission Policy" (ACM ToS 2017), as in Caffeine
// but with a fixed window: a window LRU of 1% of the keys (at least 1) in
// front of a segmented LRU main region, 20% probation and 80% protected,
// and a count-min sketch of 4-bit counters (see cmSketch) recording every
// request, halved after 10 x size recorded increments.
//
// A miss enters the window. When the window overflows, its least recent
// key is the candidate: if the main region has room the candidate enters
// probation; otherwise it is compared with the victim, probation's least
// recent key (protected's when probation is empty), and the one with the
// higher estimated frequency stays — the candidate only if strictly higher.
// A hit in probation promotes the key to protected, whose least recent key
// is demoted back to probation's front when protected overflows; hits in
// the window or in protected move the key to its list's front.
//
// Not implemented: the doorkeeper Bloom filter, Caffeine's window-size
// hill climbing, and its randomized admission against hash flooding. It is
// not safe for concurrent use.
type WTinyLFU struct {
	size, window, main, protected int
	lists
	sk cmSketch
}

const (
	wtWindow uint8 = iota
	wtProbation
	wtProtected
)

var _ Policy = (*WTinyLFU)(nil)

func wtinylfuSizes(k int) (window, main, protected int) {
	window = max(1, k/100)
	main = k - window
	return window, main, main * 8 / 10
}

// NewWTinyLFU returns an empty W-TinyLFU cache of size >= 1 keys.
func NewWTinyLFU(size int) *WTinyLFU {
	mustSize("wtinylfu", size)
	w, m, p := wtinylfuSizes(size)
	return &WTinyLFU{
		size: size, window: w, main: m, protected: p,
		lists: newLists(3, size),
		sk:    newSketch(size),
	}
}

// Access implements [Policy].
func (c *WTinyLFU) Access(key uint64) bool {
	s := &c.s
	c.sk.increment(key)
	if v, ok := c.t.get(key); ok {
		i := int32(v)
		switch s.nodes[i].list {
		case wtProbation:
			s.moveToFront(wtProtected, i)
			if s.lens[wtProtected] > c.protected {
				s.moveToFront(wtProbation, s.back(wtProtected))
			}
		default:
			s.moveToFront(s.nodes[i].list, i)
		}
		return true
	}
	// The window is full: its least recent key leaves it before the new key
	// enters (the same as letting the window overflow by one, without ever
	// holding size+1 keys).
	if s.lens[wtWindow] >= c.window {
		c.evict(s.back(wtWindow))
	}
	i := s.alloc(key)
	s.pushFront(wtWindow, i)
	c.t.put(key, int(i))
	return false
}

// evict moves the candidate cand out of the window: into probation if the
// main region has room or if it beats the victim, else out of the cache.
func (c *WTinyLFU) evict(cand int32) {
	s := &c.s
	if s.lens[wtProbation]+s.lens[wtProtected] < c.main {
		s.moveToFront(wtProbation, cand)
		return
	}
	victim := s.back(wtProbation)
	if victim < 0 {
		victim = s.back(wtProtected)
	}
	if victim >= 0 && c.sk.estimate(s.nodes[cand].key) > c.sk.estimate(s.nodes[victim].key) {
		c.drop(victim)
		s.moveToFront(wtProbation, cand)
		return
	}
	c.drop(cand)
}

// Name implements [Policy].
func (c *WTinyLFU) Name() string { return "wtinylfu" }

// Len implements [Policy].
func (c *WTinyLFU) Len() int {
	return c.s.lens[wtWindow] + c.s.lens[wtProbation] + c.s.lens[wtProtected]
}

func (c *WTinyLFU) memBytes() int { return c.lists.memBytes() + cap(c.sk.words)*8 }
