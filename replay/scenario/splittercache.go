package scenario

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// SplitterCacheConfig configures the splitter-cache what-if
// ([SplitterCache]). It writes splitter-cache.csv/.arrow and plots
// splitter-cache.png/.svg.
type SplitterCacheConfig struct {
	Common
	// Policies are online policy names (policy.Names; not min or static).
	Policies []string
	// Sizes are the cache sizes in entries.
	Sizes []int
	// Batch is the number of URLs per batch sent to a peer (the recorder's
	// SplitterBatch, default 1024).
	Batch int
	// FramingBytes is added to each sent URL's length (see
	// PartitionConfig.FramingBytes).
	FramingBytes int
	// BatchBytes is added per batch sent (request and Arrow stream headers);
	// default 0, i.e. not estimated.
	BatchBytes int
	// Seed seeds the random policies.
	Seed uint64
}

// DefaultSplitterCacheConfig returns CLOCK (the recorder's splitter cache),
// LRU and RANDOM at 2^0 .. 2^16 entries, batches of 1024 URLs.
func DefaultSplitterCacheConfig() SplitterCacheConfig {
	sizes := replay.PaperSizes()[:17] // 2^0 .. 2^16
	return SplitterCacheConfig{Policies: []string{"clock", "lru", "random"}, Sizes: sizes, Batch: 1024,
		FramingBytes: 20, Seed: 1, Common: Common{Plots: true}}
}

// SplitterCacheRow is one (node, policy, size). Node -1 is the sum over the
// nodes. Policy "none" (size 0) is the splitter without a cache.
type SplitterCacheRow struct {
	Node   int    `col:"node"`
	Policy string `col:"policy"`
	Size   int    `col:"size"`
	// Cross counts the URLs whose recorded dest is another node: what a
	// splitter without cache sends.
	Cross int64 `col:"cross"`
	// Sent counts the cross URLs the cache missed (sent to peers); Saved
	// the ones it suppressed (Cross - Sent).
	Sent         int64   `col:"sent"`
	Saved        int64   `col:"saved"`
	SentFraction float64 `col:"sent_fraction"` // Sent / Cross
	// SentBytes and SavedBytes estimate the wire bytes: URL length plus
	// FramingBytes per URL, plus BatchBytes per batch.
	SentBytes  int64 `col:"sent_bytes"`
	SavedBytes int64 `col:"saved_bytes"`
	// Batches are the batches of up to Batch URLs sent, one destination
	// each, flushed when full and at the end of the trace (the recorder
	// also flushes early when its input queue runs empty, so a live crawl
	// sends at least this many); BatchesSaved against no cache.
	Batches      int64 `col:"batches"`
	BatchesSaved int64 `col:"batches_saved"`
}

// SplitterCacheResult is the outcome of [SplitterCache].
type SplitterCacheResult struct {
	Rows  []SplitterCacheRow
	Files []string
}

type cacheRun struct {
	pol     policy.Policy
	name    string
	size    int
	pending []int // per destination: URLs in the open batch
	row     SplitterCacheRow
}

// send counts one sent URL of wire bytes to dest.
func (c *cacheRun) send(dest, batch int, wire int64) {
	c.row.Sent++
	c.row.SentBytes += wire
	if c.pending[dest]++; c.pending[dest] == batch {
		c.pending[dest] = 0
		c.row.Batches++
	}
}

// finish flushes the partial batches.
func (c *cacheRun) finish() {
	for d, p := range c.pending {
		if p > 0 {
			c.row.Batches++
			c.pending[d] = 0
		}
	}
}

// SplitterCache replays each node's cross URLs (recorded dest not the node)
// through caches in front of the peer sends, one pass per node's log.
func SplitterCache(cfg SplitterCacheConfig) (*SplitterCacheResult, error) {
	if cfg.Batch < 1 {
		return nil, fmt.Errorf("%w: scenario: batch size %d < 1", tracefile.ErrBadInput, cfg.Batch)
	}
	if cfg.FramingBytes < 0 || cfg.BatchBytes < 0 {
		return nil, fmt.Errorf("%w: scenario: negative framing bytes", tracefile.ErrBadInput)
	}
	for _, p := range cfg.Policies {
		if p == "min" || p == "static" {
			return nil, fmt.Errorf("%w: scenario: splitter cache: %s is an offline policy; use an online one", tracefile.ErrBadInput, p)
		}
	}
	info, err := readCrawlInfo(cfg.Input)
	if err != nil {
		return nil, err
	}
	dests := info.recorded
	res := &SplitterCacheResult{}
	total := map[[2]any]*SplitterCacheRow{}
	var order [][2]any
	rows := cfg.pass("splitter-cache")
	defer rows.finish()
	for _, node := range info.nodes {
		runs := []*cacheRun{{name: "none", pending: make([]int, dests)}}
		for _, name := range cfg.Policies {
			for _, size := range cfg.Sizes {
				pol, err := policy.New(name, size, policy.Options{Seed: cfg.Seed})
				if err != nil {
					return nil, fmt.Errorf("%w: scenario: %v", tracefile.ErrBadInput, err)
				}
				runs = append(runs, &cacheRun{pol: pol, name: pol.Name(), size: size, pending: make([]int, dests)})
			}
		}
		err := rows.eachNode(node, func(rec *Rec) error {
			dest := int(rec.Dest)
			if dest == rec.Node {
				return nil
			}
			if dest >= dests {
				return fmt.Errorf("%w: scenario: node %d row %d: dest %d is not a node of the %d-node crawl", tracefile.ErrCorrupt, rec.Node, rec.Seq, dest, dests)
			}
			fp := fingerprint.URL(rec.URL)
			wire := int64(len(rec.URL) + cfg.FramingBytes)
			for _, r := range runs {
				r.row.Cross++
				if r.pol != nil && r.pol.Access(fp) {
					r.row.Saved++
					r.row.SavedBytes += wire
					continue
				}
				r.send(dest, cfg.Batch, wire)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		base := runs[0]
		base.finish()
		for _, r := range runs {
			r.finish()
			r.row.Node, r.row.Policy, r.row.Size = node, r.name, r.size
			r.row.SentBytes += r.row.Batches * int64(cfg.BatchBytes)
			r.row.BatchesSaved = base.row.Batches - r.row.Batches
			r.row.SavedBytes += r.row.BatchesSaved * int64(cfg.BatchBytes)
			r.row.SentFraction = ratio(float64(r.row.Sent), float64(r.row.Cross))
			res.Rows = append(res.Rows, r.row)
			k := [2]any{r.name, r.size}
			t := total[k]
			if t == nil {
				t = &SplitterCacheRow{Node: -1, Policy: r.name, Size: r.size}
				total[k] = t
				order = append(order, k)
			}
			t.Cross += r.row.Cross
			t.Sent += r.row.Sent
			t.Saved += r.row.Saved
			t.SentBytes += r.row.SentBytes
			t.SavedBytes += r.row.SavedBytes
			t.Batches += r.row.Batches
			t.BatchesSaved += r.row.BatchesSaved
		}
	}
	for _, k := range order {
		t := total[k]
		t.SentFraction = ratio(float64(t.Sent), float64(t.Cross))
		res.Rows = append(res.Rows, *t)
	}
	return res, cfg.save(res, &res.Files, cfg)
}

// Tables returns the splitter-cache table.
func (res *SplitterCacheResult) Tables() []*Table {
	return []*Table{rowTable("splitter-cache", res.Rows)}
}

func (res *SplitterCacheResult) write(dir string, plots bool, meta tracefile.TableMeta) ([]string, error) {
	return writeResult(dir, meta, res.Tables()[:1], plots, func() []figure {
		var lines []series
		for _, r := range res.Rows {
			if r.Node != -1 || r.Size < 1 {
				continue
			}
			if len(lines) == 0 || lines[len(lines)-1].name != r.Policy {
				lines = append(lines, series{name: r.Policy})
			}
			lines[len(lines)-1].xys = append(lines[len(lines)-1].xys, plotter.XY{X: math.Log2(float64(r.Size)), Y: r.SentFraction})
		}
		return []figure{{"splitter-cache", "cross URLs sent to peers through a splitter cache (all nodes)",
			axis{label: "cache size per node (entries, log2 scale)", log2: true}, axis{label: "fraction of cross URLs sent", lo: 0, hi: 1}, lines}}
	})
}
