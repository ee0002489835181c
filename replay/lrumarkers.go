package replay

import (
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/crawltrace/crawltrace/internal/hugemem"
	pf "github.com/crawltrace/crawltrace/internal/prefetch"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// LRUMarkers computes exact LRU hit counts at a fixed list of cache sizes in
// one pass, at close to the cost of a single LRU simulation. LRU is a stack
// algorithm: the size-k cache holds the k most recently requested keys, so
// the sizes cut the recency order into buckets, bucket i holding the keys
// at depths (sizes[i-1], sizes[i]], and a request found in bucket b hits in
// every cache of size >= sizes[b].
//
// It keeps no list. Each key's latest request owns a slot on a time line
// (slots are handed out in request order; a bitmap marks the live ones),
// and since the recency order is the time order, each bucket is the run of
// live slots between two markers: bucket i is the live slots in
// [lo[i], lo[i-1]). A request's bucket is found by comparing its key's slot
// with the markers. Moving the key to the front frees its old slot and
// takes the next one; then each full bucket above b hands its oldest key to
// the bucket below by moving its marker past it: the next live slot, found
// by scanning the bitmap forward. A marker only moves forward, so the scans
// cost at most one bitmap word per 64 requests and marker. A key pushed out
// of the largest cache is deleted from the index. When the time line is
// full its live slots are renumbered 0..live-1 in order (one sequential
// pass over the index) and it is regrown to timeFactor times the live
// keys, every (timeFactor-1) x live requests.
//
// The only random memory access per request is the key's index slot (the
// bitmap is a bit per slot, 4 bits per key held); batches prefetch those
// slots a few requests ahead. Memory: the index, 8 bytes per time-line slot
// (the key of each, for renumbering and eviction), so about 32 per key held,
// and the bitmap.
//
// Unlike [LRUStack] it gives hit counts only at the chosen sizes (not every
// stack distance) and its memory is bounded by the largest size rather than
// by the number of distinct keys. It is not safe for concurrent use.
type LRUMarkers struct {
	sizes  []int
	caps   []int64 // bucket capacities: sizes[i] - sizes[i-1]
	counts []int64 // keys in each bucket
	lo     []int   // bucket i is the live slots in [lo[i], lo[i-1]), lo[-1] = now
	hits   []int64 // requests that hit in bucket i (counted ones only)
	idx    *policy.Index
	keys   []uint64 // slot -> key of the request that took it, in keyMem
	keyMem *hugemem.Block
	live   []uint64 // bitmap of the slots still held by their key
	rank   []int32  // renumber's scratch
	now    int      // next slot
	limit  int      // the time line's length (<= len(keys))
	reqs   int64
	seen   int64
	warmup int64
	// prefetch forces AccessBatch's prefetches on a small index (tests).
	prefetch bool
}

// timeFactor is the time line's length over the keys held after a
// renumbering; minSlots its least length. markerBytesPerKey is the memory
// per key held besides the index: the time line's keys and its bitmap.
const (
	timeFactor        = 4
	minSlots          = 1 << 12
	markerBytesPerKey = 8*timeFactor + (timeFactor+7)/8
)

// NewLRUMarkers returns an LRUMarkers for sizes (any order; duplicates and
// non-positive sizes are errors). The first warmup requests update the list
// but are not counted.
func NewLRUMarkers(sizes []int, warmup int64) (*LRUMarkers, error) {
	s := slices.Clone(sizes)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 || s[0] < 1 {
		return nil, fmt.Errorf("replay: LRU markers: sizes must be positive, got %v", sizes)
	}
	if s[len(s)-1] > policy.MaxSize {
		return nil, fmt.Errorf("replay: LRU markers: size %d is larger than %d", s[len(s)-1], policy.MaxSize)
	}
	m := &LRUMarkers{sizes: s, caps: make([]int64, len(s)), counts: make([]int64, len(s)), lo: make([]int, len(s)),
		hits: make([]int64, len(s)), warmup: warmup}
	prev := 0
	for i, v := range s {
		m.caps[i] = int64(v - prev)
		prev = v
	}
	m.idx = policy.NewIndex(s[len(s)-1])
	// The keys of the time line live in memory reserved for the longest
	// time line, backed only as far as it is written, so that it grows
	// without copying; if less could be reserved, renumber moves it to a
	// larger array.
	longest := timeFactor*(s[len(s)-1]+1) + minSlots
	m.keyMem = hugemem.Reserve(8*longest, 8*minSlots)
	b := m.keyMem.Bytes()
	m.keys = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	if len(m.keys) < minSlots {
		m.keys = make([]uint64, minSlots)
	}
	m.limit = minSlots
	m.live = make([]uint64, minSlots/64)
	return m, nil
}

// Access processes one request.
func (m *LRUMarkers) Access(key uint64) {
	m.seen++
	counted := m.seen > m.warmup
	if counted {
		m.reqs++
	}
	m.access(key, counted)
}

// AccessBatch processes keys in order. Once the index outgrows the caches
// it prefetches the index slot of the key tableAhead requests ahead, so the
// cache misses of consecutive requests overlap.
func (m *LRUMarkers) AccessBatch(keys []uint64) {
	// The warmup requests first, then the counted ones, so the loop below
	// does not test each request against the warmup.
	if w := m.warmup - m.seen; w > 0 {
		w = min(w, int64(len(keys)))
		m.batch(keys[:w], false)
		m.seen += w
		keys = keys[w:]
	}
	m.batch(keys, true)
	m.seen += int64(len(keys))
	m.reqs += int64(len(keys))
}

// tableAhead is how many requests ahead [LRUMarkers.AccessBatch]
// prefetches index slots.
const tableAhead = 8

func (m *LRUMarkers) batch(keys []uint64, counted bool) {
	if !m.prefetch && !m.idx.Large() {
		for _, k := range keys {
			m.access(k, counted)
		}
		return
	}
	for i, k := range keys {
		if j := i + tableAhead; j < len(keys) {
			m.idx.Prefetch(keys[j])
		}
		m.access(k, counted)
	}
}

// access processes one request, counted or not.
func (m *LRUMarkers) access(key uint64, counted bool) {
	if m.now == m.limit {
		m.renumber()
	}
	now := m.now
	m.now++
	m.keys[now] = key
	m.live[now>>6] |= 1 << (now & 63)
	nb := len(m.caps) // key's bucket; len: not held
	if t, ok := m.idx.Swap(key, now); ok {
		b := 0
		for t < m.lo[b] {
			b++
		}
		if counted {
			m.hits[b]++
		}
		m.live[t>>6] &^= 1 << (t & 63)
		m.counts[b]--
		nb = b
	}
	// The key joins bucket 0; each full bucket above its old one hands
	// its oldest key down.
	for j := 0; j < nb; j++ {
		if m.counts[j] < m.caps[j] {
			m.counts[j]++
			return
		}
		m.lo[j] = m.nextLive(m.lo[j]) + 1
	}
	if nb < len(m.caps) {
		m.counts[nb]++
		return
	}
	// The oldest key of the largest cache fell out: lo[last] has just
	// moved past it.
	t := m.lo[nb-1] - 1
	m.live[t>>6] &^= 1 << (t & 63)
	m.idx.Delete(m.keys[t])
	// Prefetch the index slot of the next key to go, the oldest held.
	m.idx.Prefetch(m.keys[m.nextLive(m.lo[nb-1])])
}

// nextLive is the first live slot at or after t; there is one: the slot
// the current request took.
func (m *LRUMarkers) nextLive(t int) int {
	w := t >> 6
	word := m.live[w] &^ (1<<(t&63) - 1)
	for word == 0 {
		w++
		word = m.live[w]
	}
	return w<<6 + bits.TrailingZeros64(word)
}

// renumber moves the live slots to 0..held-1, in order, and regrows the
// time line to timeFactor times the keys held. Each marker moves to the
// number of live slots before it, so the buckets keep their keys. The
// index is renumbered in one sequential pass over it: a slot's new number
// is its rank among the live slots, counted from the bitmap.
func (m *LRUMarkers) renumber() {
	// rank[w] is the number of live slots in words before w.
	if cap(m.rank) < len(m.live) {
		m.rank = make([]int32, len(m.live))
	}
	rank := m.rank[:len(m.live)]
	n := 0
	for w, word := range m.live {
		rank[w] = int32(n)
		n += bits.OnesCount64(word)
	}
	live := m.live
	rankOf := func(t int) int {
		return int(rank[t>>6]) + bits.OnesCount64(live[t>>6]&(1<<(t&63)-1))
	}
	m.idx.Remap(rankOf)
	for i, lo := range m.lo {
		if lo >= m.limit {
			m.lo[i] = n
		} else {
			m.lo[i] = rankOf(lo)
		}
	}
	j := 0
	for w, word := range live {
		for word != 0 {
			m.keys[j] = m.keys[w<<6+bits.TrailingZeros64(word)]
			word &= word - 1
			j++
		}
	}
	size := max(timeFactor*n, minSlots)
	size = (size + 63) &^ 63
	if size > len(m.keys) {
		keys := make([]uint64, size)
		copy(keys, m.keys[:n])
		m.keys = keys
	}
	m.limit = size
	if size/64 > len(m.live) {
		m.live = make([]uint64, size/64)
	} else {
		clear(m.live)
	}
	for i := 0; i < n>>6; i++ {
		m.live[i] = ^uint64(0)
	}
	if r := n & 63; r != 0 {
		m.live[n>>6] = 1<<r - 1
	}
	m.now = n
}

// Curve returns the hit counts so far. Distinct is not tracked (-1).
func (m *LRUMarkers) Curve() Curve {
	c := Curve{Sizes: slices.Clone(m.sizes), Requests: m.reqs, Hits: make([]int64, len(m.sizes)), Distinct: -1}
	var sum int64
	for i, h := range m.hits {
		sum += h
		c.Hits[i] = sum
	}
	return c
}

// prefetchAddr asks the processor for the cache line at p (see
// internal/prefetch); p must point into memory the caller keeps alive.
func prefetchAddr(p unsafe.Pointer) {
	a := [1]uintptr{uintptr(p)}
	pf.Addrs(a[:])
}
