package policy

// Infinite is the paper's INFINITE cache: larger than the number of
// distinct requests, so it never evicts and misses exactly once per
// distinct key. It is not safe for concurrent use.
type Infinite struct {
	t table
}

var _ Policy = (*Infinite)(nil)

// NewInfinite returns an empty INFINITE cache; it grows as needed.
func NewInfinite() *Infinite { return &Infinite{t: newTable(tableStart)} }

// Access implements [Policy].
func (c *Infinite) Access(key uint64) bool {
	if _, ok := c.t.get(key); ok {
		return true
	}
	c.t.put(key, 0)
	return false
}

// Name implements [Policy].
func (c *Infinite) Name() string { return "infinite" }

// Len implements [Policy]: the number of distinct keys seen.
func (c *Infinite) Len() int { return c.t.len() }

func (c *Infinite) memBytes() int { return c.t.bytes() }
