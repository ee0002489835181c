package replay

import (
	"fmt"
	"math"
)

// LRUStack computes exact LRU hit counts for many cache sizes in one pass
// (Mattson et al. 1970: LRU is a stack algorithm, so a request hits in every
// LRU cache at least as large as its stack distance, the number of distinct
// keys requested since the previous request of the same key, plus one).
//
// Stack distances are computed in O(log n) per request with the
// Bennett-Kruskal/Olken method: each key's most recent request occupies one
// slot on a time line, a Fenwick tree counts occupied slots, and the distance
// of a re-request is the number of occupied slots after the key's previous
// one. When the time line is full it is compacted (live slots renumbered in
// order), so memory stays proportional to the number of distinct keys (about
// 50 bytes per distinct key including the hash map), not to the trace
// length. It streams: feed it batches with [LRUStack.AccessBatch].
//
// `crawltrace replay` uses [LRUMarkers], which is faster when only a list
// of sizes is wanted; LRUStack gives every stack distance.
//
// An LRUStack is not safe for concurrent use.
type LRUStack struct {
	hist *distHist
	last map[uint64]uint32 // key -> slot of its latest request
	keys []uint64          // slot -> key
	tree []int32           // Fenwick tree over slots, 1-based
	now  uint32            // next free slot
	live int64             // occupied slots == distinct keys so far
	err  error
	full bool
}

// NewLRUStack returns an LRUStack recording hits at sizes (any order;
// duplicates are dropped). The first warmup requests update the stack but
// are not counted.
func NewLRUStack(sizes []int, warmup int64) (*LRUStack, error) {
	h, err := newDistHist(sizes, warmup)
	if err != nil {
		return nil, err
	}
	const initial = 1 << 12
	return &LRUStack{hist: h, last: make(map[uint64]uint32), keys: make([]uint64, initial), tree: make([]int32, initial+1)}, nil
}

// Access processes one request and returns its stack distance (1-based), or
// 0 for the first request of key.
func (s *LRUStack) Access(key uint64) int64 {
	if int(s.now) == len(s.keys) {
		s.compact()
		if s.full {
			return 0
		}
	}
	var d int64
	if slot, ok := s.last[key]; ok {
		d = s.live - s.prefix(slot) + 1
		s.addAt(slot, -1)
	} else {
		s.live++
	}
	s.keys[s.now] = key
	s.last[key] = s.now
	s.addAt(s.now, 1)
	s.now++
	s.hist.add(d)
	return d
}

// Remove drops key from the stack, as if it had never been requested (the
// keys below it move up one place), and reports whether it was there.
// SHARDS' fixed-size sampling drops the keys it stops sampling this way.
func (s *LRUStack) Remove(key uint64) bool {
	slot, ok := s.last[key]
	if !ok {
		return false
	}
	s.addAt(slot, -1)
	delete(s.last, key)
	s.live--
	return true
}

// Contains reports whether key is on the stack.
func (s *LRUStack) Contains(key uint64) bool {
	_, ok := s.last[key]
	return ok
}

// AccessBatch processes keys in order.
func (s *LRUStack) AccessBatch(keys []uint64) {
	for _, k := range keys {
		s.Access(k)
	}
}

// Err reports a trace too large for the stack (over 2^32-1 distinct keys).
func (s *LRUStack) Err() error { return s.err }

// Curve returns the hit counts so far.
func (s *LRUStack) Curve() Curve { return s.hist.curve(s.live) }

// prefix counts occupied slots in [0, slot].
func (s *LRUStack) prefix(slot uint32) int64 {
	var sum int64
	for i := int(slot) + 1; i > 0; i -= i & -i {
		sum += int64(s.tree[i])
	}
	return sum
}

func (s *LRUStack) addAt(slot uint32, v int32) {
	for i := int(slot) + 1; i < len(s.tree); i += i & -i {
		s.tree[i] += v
	}
}

// compact renumbers the live slots 0..live-1 in time order and grows the
// time line to twice the live count, so compaction costs O(1) amortized per
// request.
func (s *LRUStack) compact() {
	n := min(max(2*s.live, int64(len(s.keys)), 1<<12), math.MaxUint32)
	if s.live >= n {
		// 2^32-1 distinct keys: the time line cannot grow; stop counting.
		if s.err == nil {
			s.err = fmt.Errorf("replay: LRU stack: more than %d distinct keys", s.live-1)
		}
		s.full = true
		return
	}
	keys := make([]uint64, n)
	j := uint32(0)
	for t := uint32(0); t < s.now; t++ {
		k := s.keys[t]
		if v, ok := s.last[k]; ok && v == t {
			keys[j] = k
			s.last[k] = j
			j++
		}
	}
	s.keys, s.now = keys, j
	// Linear-time Fenwick build: slots 0..j-1 hold 1.
	tree := make([]int32, n+1)
	for i := 1; i <= int(n); i++ {
		if i <= int(j) {
			tree[i]++
		}
		if p := i + (i & -i); p <= int(n) {
			tree[p] += tree[i]
		}
	}
	s.tree = tree
}

// LRUCurve runs src through an [LRUStack] and returns its curve.
func LRUCurve(src Source, sizes []int, warmup int64) (Curve, error) {
	s, err := NewLRUStack(sizes, warmup)
	if err != nil {
		return Curve{}, err
	}
	for src.Next() {
		s.AccessBatch(src.Keys())
	}
	if err := src.Err(); err != nil {
		return Curve{}, err
	}
	return s.Curve(), s.Err()
}
