package policy

// ARC is the Adaptive Replacement Cache of Megiddo & Modha (FAST 2003),
// following Figure 4 of the paper: cached keys in T1 (seen once recently)
// and T2 (seen at least twice), ghost keys in B1 and B2, all LRU lists, and
// a target size p for T1 that grows on B1 hits and shrinks on B2 hits.
//
// p and the adaptation steps are real numbers, as Figure 4 writes them:
// δ1 = |B2|/|B1| (at least 1) on a B1 hit, δ2 = |B1|/|B2| (at least 1) on a B2
// hit, and REPLACE compares |T1| with p (|T1| > p, or |T1| = p for a B2
// hit). Rounding the steps down to integers, as crawltrace once did, moves p
// by less than the paper on both kinds of ghost hit and changes which list
// REPLACE takes from; that was the whole of the difference from
// libCacheSim's ARC.c, which keeps p in a double (ARC_params_t.p; ARC_find,
// cases II and III; _ARC_replace). With real steps crawltrace's miss counts
// equal libCacheSim's exactly at 2^10, 2^16 and 2^20 on a 20M-request Zipf
// trace (docs/benchmarks.md, "Fidelity to libCacheSim"). p is a float64
// updated with the same operations in the same order as there (one division,
// one addition or subtraction, then the clamp to [0, c]), so the two agree
// bit for bit.
//
// libCacheSim's other departures from Figure 4 do not change anything for
// unit-size keys: its REPLACE also takes from T1 when T2 is empty (with the
// cache full that only happens when |T1| = c, and then B1 is empty, so
// Figure 4 never gets there), and case IV(b) drops the LRU key of B2 when
// the directory holds 2c keys or more, which is the paper's "= 2c" since
// it never holds more. It is not safe for concurrent use.
type ARC struct {
	size int
	p    float64
	lists
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
	return &ARC{size: size, lists: newLists(4, 2*size)}
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
			d := max(float64(s.lens[arcB2])/float64(s.lens[arcB1]), 1)
			c.p = min(c.p+d, float64(c.size))
			c.replace(false)
			s.moveToFront(arcT2, i)
			return false
		default: // case III: B2
			d := max(float64(s.lens[arcB1])/float64(s.lens[arcB2]), 1)
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
	t1 := float64(s.lens[arcT1])
	if t1 >= 1 && ((inB2 && t1 == c.p) || t1 > c.p) {
		s.moveToFront(arcB1, s.back(arcT1))
	} else {
		s.moveToFront(arcB2, s.back(arcT2))
	}
}

// Name implements [Policy].
func (c *ARC) Name() string { return "arc" }

// Len implements [Policy].
func (c *ARC) Len() int { return c.s.lens[arcT1] + c.s.lens[arcT2] }
