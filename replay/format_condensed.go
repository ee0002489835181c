package replay

import "github.com/crawltrace/crawltrace/internal/tracefile"

// condensedSource reads a condensed trace zero-copy through
// tracefile.CondensedReader.
type condensedSource struct {
	r *tracefile.CondensedReader
}

func openCondensed(path string) (Source, error) {
	r, err := tracefile.OpenCondensed(path)
	if err != nil {
		return nil, err
	}
	return &condensedSource{r: r}, nil
}

func (c *condensedSource) Next() bool {
	for c.r.Next() {
		if len(c.r.FPs()) > 0 {
			return true
		}
	}
	return false
}
func (c *condensedSource) Keys() []uint64 { return c.r.FPs() }
func (c *condensedSource) Err() error     { return c.r.Err() }
func (c *condensedSource) Reset() error   { c.r.Reset(); return nil }
func (c *condensedSource) Len() int64     { return c.r.Len() }
func (c *condensedSource) Close() error   { return c.r.Close() }

var _ Source = (*condensedSource)(nil)
