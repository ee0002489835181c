package policy

// ARC is the Adaptive Replacement Cache of Megiddo & Modha (FAST 2003),
// following Figure 4 of the paper: cached keys in T1 (seen once recently)
// and T2 (seen at least twice), ghost keys in B1 and B2, all LRU lists, and
// a target size p for T1 that grows on B1 hits and shrinks on B2 hits. The
// adaptation steps are the paper's max(|B2|/|B1|, 1) and max(|B1|/|B2|, 1)
// in integer arithmetic, so p stays an integer. It is not safe for
// concurrent use.
type ARC struct {
	size int
	p    int
	t    table
	s    slab
}

const (
	arcT1 uint8 = iota
	arcT2
	arcB1
	arcB2
)

var _ Policy = (*ARC)(nil)

// NewARC returns an empty ARC cache of size >= 1 keys (it also remembers up
// to size evicted keys).
func NewARC(size int) *ARC {
	mustSize("arc", size)
	return &ARC{size: size, t: newTable(2 * size), s: newSlab(4, 2*size)}
}

// Access implements [Policy].
func (c *ARC) Access(key uint64) bool {
	s := &c.s
	if v, ok := c.t.get(key); ok {
		i := int32(v)
		switch s.nodes[i].list {
		case arcT1, arcT2: // case I
			s.moveToFront(arcT2, i)
			return true
		case arcB1: // case II
			d := 1
			if s.lens[arcB2] > s.lens[arcB1] {
				d = s.lens[arcB2] / s.lens[arcB1]
			}
			c.p = min(c.p+d, c.size)
			c.replace(false)
			s.moveToFront(arcT2, i)
			return false
		default: // case III: B2
			d := 1
			if s.lens[arcB1] > s.lens[arcB2] {
				d = s.lens[arcB1] / s.lens[arcB2]
			}
			c.p = max(c.p-d, 0)
			c.replace(true)
			s.moveToFront(arcT2, i)
			return false
		}
	}
	// case IV: not in any list
	l1 := s.lens[arcT1] + s.lens[arcB1]
	if l1 == c.size {
		if s.lens[arcT1] < c.size {
			c.drop(s.back(arcB1))
			c.replace(false)
		} else {
			c.drop(s.back(arcT1))
		}
	} else if total := l1 + s.lens[arcT2] + s.lens[arcB2]; total >= c.size {
		if total == 2*c.size {
			c.drop(s.back(arcB2))
		}
		c.replace(false)
	}
	i := s.alloc(key)
	s.pushFront(arcT1, i)
	c.t.put(key, int(i))
	return false
}

// replace is the paper's REPLACE(x, p): demote the LRU key of T1 or of T2
// to its ghost list.
func (c *ARC) replace(inB2 bool) {
	s := &c.s
	t1 := s.lens[arcT1]
	if t1 >= 1 && ((inB2 && t1 == c.p) || t1 > c.p) {
		s.moveToFront(arcB1, s.back(arcT1))
	} else {
		s.moveToFront(arcB2, s.back(arcT2))
	}
}

func (c *ARC) drop(i int32) {
	c.s.unlink(i)
	c.t.del(c.s.nodes[i].key)
	c.s.release(i)
}

// Name implements [Policy].
func (c *ARC) Name() string { return "arc" }

// Len implements [Policy].
func (c *ARC) Len() int { return c.s.lens[arcT1] + c.s.lens[arcT2] }

func (c *ARC) memBytes() int { return c.t.bytes() + c.s.bytes() }
