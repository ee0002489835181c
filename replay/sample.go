package replay

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Sampled miss-rate curves.
//
// With Config.Sample = R, a replay keeps only the requests for keys whose
// sampling hash is below R x 2^64 (spatial sampling, SHARDS: Waldspurger et
// al., FAST 2015), about a fraction R of the keys with all their requests,
// and simulates every policy at 1 + (size-1) x R keys on that sampled
// trace (miniature simulation: Waldspurger et al., ATC 2017; see
// traceSample.scale for the 1 + ...). A miniature cache sees the sampled
// keys as the full cache sees all of them, so its miss ratio estimates the
// full cache's. Rows give the estimate scaled to
// the whole trace as libCacheSim's mrcProfiler does: misses m' of the
// sampled trace count as m'/R misses of the N requests of the whole trace,
// miss rate m'/(R N). The difference between the expected number of
// sampled requests, R N, and the actual one is thereby counted as hits (the
// SHARDS_adj correction of the FAST paper): a few very popular
// keys falling in or out of the sample move the actual count far from R N,
// and those requests are mostly hits. Below size 1/R the miniature holds
// one key: samplesmall.go computes those sizes exactly instead, or writes
// no row.
//
// With Config.SampleMaxKeys = S (SHARDS' fixed-size variant) the sample
// holds at most S keys: lru runs SHARDS itself, in one pass, lowering the
// threshold each time an (S+1)-th key would enter and dropping the sampled
// key of highest hash; each sampled request counts 1/R_t with the rate R_t
// in force when it is seen, its stack distance d becomes 1 + (d-1)/R_t, and
// N - sum(1/R_t) is added to the hits of the smallest size (SHARDS_adj). The
// other policies, whose miniature caches cannot shrink as the rate drops,
// take the rate at which the whole trace's sample holds exactly S keys (the
// keys SHARDS ends with), found by a first pass over the trace.

// sampleSalt salts the sampling hash, so that a sample is not the set of
// keys that also fall first in the fingerprints' own order.
const sampleSalt = 0x5AD5A3C1E5B2F00D

// sampleHash is the hash keys are sampled by: SplitMix64's finalizer of the
// salted key (a bijection, so small integer keys of text traces spread as
// fingerprints do).
func sampleHash(key uint64) uint64 {
	z := key ^ sampleSalt
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// traceSample is how one trace is sampled.
type traceSample struct {
	threshold uint64  // keep a key iff its hash < threshold (all: keep every key)
	all       bool    // the sample is the whole trace
	rate      float64 // threshold / 2^64, or 1
	total     int64   // requests of the whole trace
	// keys is the sampled trace, held in memory when it takes at most
	// sampleHold bytes; nil otherwise (each run then reads the trace).
	keys []uint64
	// small holds the sizes below 1/rate and the exact caches run there
	// (see samplesmall.go); nil with SampleMaxKeys.
	small *smallExact
}

// sampleHold bounds the sampled trace held in memory for the runs to share,
// in bytes: 128M requests. A sample of 0.1% of a 10^9-request trace (8 MB)
// is read once instead of once per run. A variable for tests.
var sampleHold int64 = 1 << 30

func (ts *traceSample) keep(key uint64) bool { return ts.all || sampleHash(key) < ts.threshold }

// rateThreshold turns a rate in (0, 1) into a hash threshold.
func rateThreshold(rate float64) uint64 { return uint64(math.Ldexp(rate, 64)) }

// thresholdRate is the share of hashes below t.
func thresholdRate(t uint64) float64 { return math.Ldexp(float64(t), -64) }

// scale is the miniature cache size for a cache of size keys:
// 1 + (size-1) x rate, rounded. The requested key itself is always in the
// sample, the d-1 other keys of a stack distance d only at the rate, so a
// sampled distance is 1 + (d-1) R on average: an LRU miniature of
// 1 + (size-1) R keys hits when the full cache does. Plain size x R (as
// libCacheSim's mrcProfiler scales) shifts the whole curve by about 1/R
// keys, which on a 5M-request Zipf trace at R = 0.01 raised the LRU miss
// ratio estimate by up to 0.04 at 2^9..2^11.
func (ts *traceSample) scale(size int) int {
	if ts == nil || ts.all {
		return size
	}
	return max(1, int(math.Round(1+float64(size-1)*ts.rate)))
}

// estimate turns rows of the sampled trace (miniature sizes already mapped
// back to the full ones) into estimates for the whole trace.
func (ts *traceSample) estimate(rows []Row) {
	for i := range rows {
		r := &rows[i]
		misses := r.MissRate * float64(r.Requests) / ts.rate // mean over seeds
		n := float64(ts.total)
		scale := 0.0
		if ts.total > 0 {
			scale = float64(r.Requests) / (ts.rate * n)
		}
		misses = min(max(misses, 0), n)
		r.Requests = ts.total
		r.Misses = int64(math.Round(misses))
		r.Hits = ts.total - r.Misses
		r.MissRate = 0
		if ts.total > 0 {
			r.MissRate = misses / n
		}
		r.MissRateStd *= scale
		r.SampleRate = ts.rate
	}
}

// finish turns the rows of unit u, run on the sample, into the rows the
// sampled run writes: estimates for the whole trace at the sizes the
// sample resolves, the exact rows below that, or none there for a policy
// not computed exactly (see samplesmall.go). size is the unit's size, 0
// for a one-pass unit.
func (ts *traceSample) finish(path, name string, size int, rows []Row) []Row {
	if ts.small == nil {
		ts.estimate(rows)
		return rows
	}
	out := rows[:0]
	var small []int
	for _, r := range rows {
		if name != "infinite" && ts.small.has(r.Size) {
			small = append(small, r.Size)
			continue
		}
		out = append(out, r)
	}
	ts.estimate(out)
	if size > 0 && ts.small.has(size) {
		small = append(small, size)
	}
	slices.Sort(small)
	small = slices.Compact(small)
	return append(out, ts.small.rows(path, name, small, ts.total)...)
}

// smallBuffers is the number of batches the small exact caches may lag
// behind the pass that feeds them.
const smallBuffers = 4

// prepareSample makes one pass over the trace: it counts its requests,
// runs the exact caches of the sizes below 1/R (fixed rate R) and,
// with SampleMaxKeys, finds the threshold below which exactly that many
// distinct keys hash (or keeps every key if the trace has no more).
func (p *plan) prepareSample(ctx context.Context, path string) (*traceSample, error) {
	ts := &traceSample{all: true, rate: 1}
	if p.sample > 0 && p.sample < 1 {
		ts.all, ts.threshold, ts.rate = false, rateThreshold(p.sample), p.sample
	}
	src, err := Open(path, p.format)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var low lowestHashes
	var kept int64
	if p.sampleMaxKeys > 0 {
		low = newLowestHashes(p.sampleMaxKeys)
	} else if !ts.all {
		ts.small = newSmallExact(smallSizes(p.sizes, ts.rate), p.policies, !p.omitSmall)
	}
	// The small exact caches run beside the pass, on copies of its
	// batches (a few buffers passed round), so that on two cores the pass
	// takes the longer of the two rather than their sum.
	var small, free chan []uint64
	var smallDone chan struct{}
	stopSmall := func() {
		if small != nil {
			close(small)
			<-smallDone
			small = nil
		}
	}
	if ts.small != nil && ts.small.busy() {
		small, free, smallDone = make(chan []uint64, smallBuffers), make(chan []uint64, smallBuffers), make(chan struct{})
		for range smallBuffers {
			free <- nil
		}
		go func(se *smallExact, in <-chan []uint64) {
			defer close(smallDone)
			for keys := range in {
				se.access(keys)
				free <- keys
			}
		}(ts.small, small)
		defer stopSmall()
	}
	// Hold the keys that can still be in the sample: below the rate's
	// threshold and, with SampleMaxKeys, not above the highest of the
	// lowest hashes so far (the final threshold is at most that).
	hold := true
	var held []uint64
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		keys := src.Keys()
		ts.total += int64(len(keys))
		if small != nil {
			buf := append((<-free)[:0], keys...)
			small <- buf
		}
		for _, k := range keys {
			if ts.keep(k) {
				kept++
				if p.sampleMaxKeys > 0 {
					h := sampleHash(k)
					low.keepLowest(p.sampleMaxKeys+1, k, h)
					if low.len() > p.sampleMaxKeys && h > low.top().h {
						continue
					}
				}
				if hold {
					if held = append(held, k); int64(len(held)) > sampleHold/8 {
						hold, held = false, nil
					}
				}
			}
		}
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	stopSmall()
	if kept == 0 && ts.total > 0 {
		return nil, fmt.Errorf("%w: replay: %s: a %g sample holds none of its %d requests (raise --sample)", tracefile.ErrBadInput, filepath.Base(path), p.sample, ts.total)
	}
	// With n+1 keys kept, exactly n hash below the highest of them.
	if p.sampleMaxKeys > 0 && low.len() > p.sampleMaxKeys {
		ts.all, ts.threshold = false, low.top().h
		ts.rate = thresholdRate(ts.threshold)
	}
	if hold {
		ts.keys = slices.Clip(slices.DeleteFunc(held, func(k uint64) bool { return !ts.keep(k) }))
	}
	return ts, nil
}

// lowestHashes is a set of keys with their hashes, the highest hash on
// top (a max-heap with a membership map).
type lowestHashes struct {
	heap []hashedKey
	in   map[uint64]struct{}
}

type hashedKey struct{ h, k uint64 }

func newLowestHashes(n int) lowestHashes {
	return lowestHashes{in: make(map[uint64]struct{}, min(n, 1<<16)+1)}
}

func (l *lowestHashes) len() int          { return len(l.heap) }
func (l *lowestHashes) has(k uint64) bool { _, ok := l.in[k]; return ok }
func (l *lowestHashes) top() hashedKey    { return l.heap[0] }

func (l *lowestHashes) push(k, h uint64) {
	l.heap = append(l.heap, hashedKey{h, k})
	l.in[k] = struct{}{}
	for j := len(l.heap) - 1; j > 0; {
		p := (j - 1) / 2
		if l.heap[p].h >= l.heap[j].h {
			break
		}
		l.heap[p], l.heap[j] = l.heap[j], l.heap[p]
		j = p
	}
}

func (l *lowestHashes) pop() hashedKey {
	h := l.heap
	top := h[0]
	delete(l.in, top.k)
	h[0] = h[len(h)-1]
	h = h[:len(h)-1]
	l.heap = h
	for j := 0; ; {
		c := 2*j + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r].h > h[c].h {
			c = r
		}
		if h[c].h <= h[j].h {
			break
		}
		h[c], h[j] = h[j], h[c]
		j = c
	}
	return top
}

// keepLowest offers key k of hash h to a set of at most n keys of lowest
// hash.
func (l *lowestHashes) keepLowest(n int, k, h uint64) {
	if l.has(k) {
		return
	}
	if l.len() < n {
		l.push(k, h)
	} else if h < l.top().h {
		l.pop()
		l.push(k, h)
	}
}

// sampledSource passes on the requests of src whose keys ts keeps.
type sampledSource struct {
	Source
	ts   *traceSample
	buf  []uint64
	read int64 // requests read from Source, kept or not
}

func (s *sampledSource) Next() bool {
	for s.Source.Next() {
		s.buf = s.buf[:0]
		s.read += int64(len(s.Source.Keys()))
		for _, k := range s.Source.Keys() {
			if s.ts.keep(k) {
				s.buf = append(s.buf, k)
			}
		}
		if len(s.buf) > 0 {
			return true
		}
	}
	return false
}

func (s *sampledSource) Keys() []uint64 { return s.buf }

func (s *sampledSource) Reset() error { s.read = 0; return s.Source.Reset() }

// shardsLRU is SHARDS with a fixed sample size (Waldspurger et al., FAST
// 2015, with its SHARDS_adj correction): an LRU
// stack of the sampled keys, at most maxKeys of them, and estimated hits per
// size bucket. It is not safe for concurrent use.
type shardsLRU struct {
	sizes  []int // ascending, distinct
	hits   []float64
	st     *LRUStack
	low    lowestHashes // the sampled keys
	max    int
	t      uint64
	all    bool
	rate   float64
	weight float64 // sum of 1/R_t over sampled requests
	total  int64
}

func newShardsLRU(sizes []int, maxKeys int, rate float64) (*shardsLRU, error) {
	s, err := checkSizes(sizes)
	if err != nil {
		return nil, err
	}
	st, err := NewLRUStack([]int{1}, 0)
	if err != nil {
		return nil, err
	}
	sh := &shardsLRU{sizes: s, hits: make([]float64, len(s)), st: st, low: newLowestHashes(maxKeys), max: maxKeys, all: true, rate: 1}
	if rate > 0 && rate < 1 {
		sh.all, sh.t, sh.rate = false, rateThreshold(rate), rate
	}
	return sh, nil
}

func (sh *shardsLRU) access(key uint64) {
	sh.total++
	h := sampleHash(key)
	if !sh.all && h >= sh.t {
		return
	}
	if !sh.low.has(key) {
		if sh.low.len() >= sh.max {
			// Full: the threshold falls to the highest hash among the
			// sampled keys and this one, and that key leaves the sample.
			if h > sh.low.top().h {
				sh.all, sh.t, sh.rate = false, h, thresholdRate(h)
				return
			}
			top := sh.low.pop()
			sh.st.Remove(top.k)
			sh.all, sh.t, sh.rate = false, top.h, thresholdRate(top.h)
		}
		sh.low.push(key, h)
	}
	w := 1 / sh.rate
	sh.weight += w
	d := sh.st.Access(key)
	if d <= 0 {
		return
	}
	// The key itself is always sampled, the d-1 keys above it at the rate
	// (see traceSample.scale).
	dist := 1 + float64(d-1)*w
	if i, _ := slices.BinarySearchFunc(sh.sizes, dist, func(s int, d float64) int {
		if float64(s) < d {
			return -1
		}
		if float64(s) > d {
			return 1
		}
		return 0
	}); i < len(sh.hits) {
		sh.hits[i] += w
	}
}

// rows returns the estimated curve: SHARDS_adj adds the difference between
// the requests of the trace and the sampled requests' total weight to the
// hits of the smallest size, and the cumulated hits give each size's.
func (sh *shardsLRU) rows(trace string) []Row {
	rows := make([]Row, len(sh.sizes))
	n := float64(sh.total)
	cum := n - sh.weight
	for i, s := range sh.sizes {
		cum += sh.hits[i]
		misses := min(max(n-cum, 0), n)
		r := Row{Trace: trace, Policy: "lru", Size: s, Requests: sh.total, Misses: int64(math.Round(misses)), Seeds: 1, SampleRate: sh.rate}
		r.Hits = r.Requests - r.Misses
		if n > 0 {
			r.MissRate = misses / n
		}
		rows[i] = r
	}
	return rows
}
