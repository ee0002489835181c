package replay

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/crawltrace/crawltrace/replay/policy"
)

// Exact rows below a sample's resolution.
//
// A sample at rate R simulates a cache of size keys at 1 + (size-1) R
// keys; below size 1/R that is one key (or two), and the estimate is
// wrong by whatever separates a one-key cache from the full one: on a
// 5M-request Zipf trace at R = 0.01, up to 0.35 of miss rate. Those
// caches are small, so a fixed-rate sampled run computes them exactly
// instead, on every request of the trace, in the pass prepareSample makes
// anyway: LRU's with an [LRUMarkers] as deep as the largest of them (one
// list of fewer than 1/R keys, held in cache, for every small size), each
// other online policy's by running the policy itself at each small size.
// Memory is bounded by the small sizes' sum, whatever the trace. Their
// rows are the exact run's rows (SampleRate 0). MIN and STATIC need the
// whole trace (next uses, popularity counts), which a streamed pass does
// not hold: a sampled run writes no row of theirs below 1/R. INFINITE has
// no size; its row stays the sample's estimate.
//
// With SampleMaxKeys the rate is only known at the end of the pass (it
// falls as keys arrive), so those runs keep the sampled rows at every
// size.

// smallExact runs the exact caches of the sizes below a sample's
// resolution. It is not safe for concurrent use.
type smallExact struct {
	sizes []int         // ascending: the sizes below 1/R
	lru   *LRUMarkers   // nil when lru is not replayed
	runs  []*smallCache // the other online policies, per size and seed
	seeds int
}

type smallCache struct {
	policy string
	size   int
	p      policy.Policy
	batch  policy.Batcher
	hits   int64
}

// smallSizes returns the sizes of cfg below the resolution 1/rate of a
// sample, ascending: those whose miniature, 1 + (size-1) rate keys, holds
// less than two keys.
func smallSizes(sizes []int, rate float64) []int {
	var s []int
	for _, v := range sizes {
		if float64(v)*rate < 1 {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// exactBelowResolution reports whether a sampled run computes name exactly
// at the sizes below the sample's resolution: every online policy with a
// size. The offline ones (min, static) need the whole trace.
func exactBelowResolution(name string) bool {
	switch name {
	case "infinite", "min", "static":
		return false
	}
	return true
}

// newSmallExact returns the exact caches of cfg's policies at sizes, or
// nil when there are none.
func newSmallExact(cfg *Config, sizes []int) (*smallExact, error) {
	if len(sizes) == 0 {
		return nil, nil
	}
	se := &smallExact{sizes: sizes, seeds: max(cfg.Seeds, 1)}
	for _, name := range cfg.Policies {
		if !exactBelowResolution(name) {
			continue
		}
		if name == "lru" {
			m, err := NewLRUMarkers(sizes, 0)
			if err != nil {
				return nil, err
			}
			se.lru = m
			continue
		}
		seeds := 1
		if randomized(name) {
			seeds = se.seeds
		}
		for _, size := range sizes {
			for s := range seeds {
				p, err := policy.New(name, size, policy.Options{Seed: uint64(s + 1), ChargeStaticLoads: cfg.ChargeStatic})
				if err != nil {
					return nil, fmt.Errorf("replay: %w", err)
				}
				b, _ := p.(policy.Batcher)
				se.runs = append(se.runs, &smallCache{policy: name, size: size, p: p, batch: b})
			}
		}
	}
	return se, nil
}

// access feeds a batch of the whole trace to every exact cache.
func (se *smallExact) access(keys []uint64) {
	if se.lru != nil {
		se.lru.AccessBatch(keys)
	}
	for _, c := range se.runs {
		if c.batch != nil {
			c.hits += int64(c.batch.AccessBatch(keys))
			continue
		}
		for _, k := range keys {
			if c.p.Access(k) {
				c.hits++
			}
		}
	}
}

// has reports whether size is below the sample's resolution.
func (se *smallExact) has(size int) bool {
	if se == nil {
		return false
	}
	_, ok := slices.BinarySearch(se.sizes, size)
	return ok
}

// rows returns the exact rows of policy name at the small sizes among
// sizes (the rows an exact run writes), reqs being the trace's requests.
func (se *smallExact) rows(path, name string, sizes []int, reqs int64) []Row {
	trace := filepath.Base(path)
	var rows []Row
	if name == "lru" && se.lru != nil {
		c := se.lru.Curve()
		for _, s := range sizes {
			if j, ok := slices.BinarySearch(c.Sizes, s); ok {
				rows = append(rows, Row{Trace: trace, Policy: name, Size: s, Requests: c.Requests,
					Hits: c.Hits[j], Misses: c.Misses(j), MissRate: c.MissRate(j), Seeds: 1})
			}
		}
		return rows
	}
	for _, s := range sizes {
		var hits []int64
		for _, c := range se.runs {
			if c.policy == name && c.size == s {
				hits = append(hits, c.hits)
			}
		}
		if len(hits) > 0 {
			rows = append(rows, fixedRow(trace, name, s, reqs, hits))
		}
	}
	return rows
}
