package policy

// TwoQ is the full 2Q of Johnson & Shasha (VLDB 1994): new keys enter the
// FIFO A1in; keys pushed out of A1in are remembered (as ghosts) in the
// FIFO A1out; a miss on a key remembered in A1out enters the LRU Am; hits
// in Am move the key to Am's front, hits in A1in do nothing. With
// Kin = max(1, k/4) and Kout = max(1, k/2), making room for a miss on a
// full cache ("reclaimfor") pages out A1in's oldest key into A1out
// (trimming A1out to Kout) if |A1in| > Kin, and otherwise evicts Am's
// least recent key. Two details the paper's pseudo-code leaves implicit:
// a key found in A1out leaves A1out before room is made for it, and when Am
// is empty the key comes from A1in regardless of Kin (only possible for
// k = 1). It is not safe for concurrent use.
type TwoQ struct {
	size, kin, kout int
	lists
}

const (
	twoqA1in uint8 = iota
	twoqA1out
	twoqAm
)

var _ Policy = (*TwoQ)(nil)

func twoqSizes(k int) (kin, kout int) { return max(1, k/4), max(1, k/2) }

// NewTwoQ returns an empty 2Q cache of size >= 1 keys.
func NewTwoQ(size int) *TwoQ {
	mustSize("2q", size)
	kin, kout := twoqSizes(size)
	return &TwoQ{size: size, kin: kin, kout: kout, lists: newLists(3, size+kout)}
}

// Access implements [Policy].
func (c *TwoQ) Access(key uint64) bool {
	s := &c.s
	if v, ok := c.t.get(key); ok {
		i := int32(v)
		switch s.nodes[i].list {
		case twoqAm:
			s.moveToFront(twoqAm, i)
			return true
		case twoqA1in:
			return true
		default: // A1out
			s.unlink(i)
			c.reclaim()
			s.pushFront(twoqAm, i)
			return false
		}
	}
	c.reclaim()
	i := s.alloc(key)
	s.pushFront(twoqA1in, i)
	c.t.put(key, int(i))
	return false
}

func (c *TwoQ) reclaim() {
	s := &c.s
	if s.lens[twoqA1in]+s.lens[twoqAm] < c.size {
		return
	}
	if s.lens[twoqA1in] > c.kin || s.lens[twoqAm] == 0 {
		s.moveToFront(twoqA1out, s.back(twoqA1in))
		if s.lens[twoqA1out] > c.kout {
			c.drop(s.back(twoqA1out))
		}
		return
	}
	c.drop(s.back(twoqAm))
}

// Name implements [Policy].
func (c *TwoQ) Name() string { return "2q" }

// Len implements [Policy].
func (c *TwoQ) Len() int { return c.s.lens[twoqA1in] + c.s.lens[twoqAm] }
