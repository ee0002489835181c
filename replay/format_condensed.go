package replay

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// condensedSource reads a condensed trace zero-copy through
// tracefile.CondensedReader.
type condensedSource struct {
	r *tracefile.CondensedReader
}

func openCondensed(path string) (Source, error) {
	if rawSegment(path) {
		return nil, fmt.Errorf("%w: replay: %s is a raw URL log segment of a crawl (an Arrow stream), not a condensed trace: condense its crawl directory first (crawltrace condense CRAWL_DIR -o OUT_DIR) and replay OUT_DIR", tracefile.ErrBadInput, path)
	}
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

// rawSegment reports whether path is a crawl's raw log segment, which
// crawltrace names *.arrows and writes as an Arrow IPC stream (its first
// bytes the stream's continuation marker, not a file's "ARROW1").
func rawSegment(path string) bool {
	if strings.HasSuffix(path, ".arrows") {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && head == [4]byte{0xff, 0xff, 0xff, 0xff}
}

// rawCrawlDir reports whether dir is a raw crawl directory: it has a
// manifest, or node-NNN directories of segments.
func rawCrawlDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "node-*", "*.arrows"))
	return len(m) > 0
}
