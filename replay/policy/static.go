package policy

import (
	"context"
	"slices"
)

// Static is the paper's STATIC: a first pass over the whole trace counts
// each key's requests and the cache is preloaded with the k most popular
// keys (ties broken by earliest first request, so the choice is
// deterministic). It never evicts and never admits.
//
// By default the preloads are free, as in the paper: the first request for
// a preloaded key is a hit. With Options.ChargeStaticLoads the preloads are
// paid for on demand instead: the first request for each preloaded key
// counts as a miss (a cold load) and later ones as hits. Len is the number
// of preloaded keys, min(k, distinct keys), either way. It is not safe for
// concurrent use.
type Static struct {
	n      int
	charge bool
	t      table  // preloaded key -> index into seen
	seen   []bool // with charging: whether the key has been requested yet
}

var _ Policy = (*Static)(nil)

// NewStatic returns a STATIC cache of size >= 1 keys preloaded from
// opts.Trace (which must not be nil).
func NewStatic(size int, opts Options) (*Static, error) {
	if err := checkOffline("static", size, opts); err != nil {
		return nil, err
	}
	// Distinct keys in order of first request, with their counts.
	idx := newTable(min(len(opts.Trace), 1<<16))
	var keys []uint64
	var counts []int64
	for t, k := range opts.Trace {
		if t%CheckEvery == 0 && Canceled(opts.Cancel) {
			return nil, context.Canceled
		}
		if i, ok := idx.get(k); ok {
			counts[i]++
			continue
		}
		idx.put(k, len(keys))
		keys = append(keys, k)
		counts = append(counts, 1)
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if counts[a] != counts[b] {
			if counts[a] > counts[b] {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	n := min(size, len(keys))
	c := &Static{n: n, charge: opts.ChargeStaticLoads, t: newTable(n)}
	if c.charge {
		c.seen = make([]bool, n)
	}
	for i, o := range order[:n] {
		c.t.put(keys[o], i)
	}
	return c, nil
}

// Access implements [Policy].
func (c *Static) Access(key uint64) bool {
	i, ok := c.t.get(key)
	if !ok {
		return false
	}
	if c.charge && !c.seen[i] {
		c.seen[i] = true
		return false
	}
	return true
}

// Name implements [Policy].
func (c *Static) Name() string { return "static" }

// Len implements [Policy].
func (c *Static) Len() int { return c.n }

func (c *Static) memBytes() int { return c.t.bytes() + cap(c.seen) }
