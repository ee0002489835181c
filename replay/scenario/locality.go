package scenario

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

// LocalityConfig configures the host-locality question ([Locality], the
// paper's open question 3). It writes locality.csv/.arrow and
// locality-reuse.csv/.arrow, and plots locality.png/.svg and
// locality-reuse.png/.svg.
type LocalityConfig struct {
	Common
	// Sizes are the LRU cache sizes at which hits are split.
	Sizes []int
}

// DefaultLocalityConfig returns sizes 2^0 .. 2^20.
func DefaultLocalityConfig() LocalityConfig {
	sizes := replay.PaperSizes()[:21] // 2^0 .. 2^20
	return LocalityConfig{Sizes: sizes, Common: Common{Plots: true}}
}

// Locality classes of a re-reference: how the page that produced the
// previous occurrence of the URL relates to the page producing this one.
const (
	ClassSamePage  = iota // the same page (a duplicate link on one page)
	ClassSameHost         // another page of the same host
	ClassOtherHost        // a page of another host
	ClassUnknown          // a page not in the page log, or a seed
	numClasses
)

// LocalityRow is one (node, LRU size). Node -1 sums the nodes.
type LocalityRow struct {
	Node     int     `col:"node"`
	Size     int     `col:"size"`
	Requests int64   `col:"requests"`
	Hits     int64   `col:"hits"` // LRU hits at Size: re-references at stack distance <= Size
	HitRate  float64 `col:"hit_rate"`
	// ByClass splits Hits by the class of the re-reference (Class*).
	ByClass [numClasses]int64 `col:"same_page,same_host,other_host,unknown"`
	// SameHostFraction is (same page + same host) / (hits of known class):
	// the share of hits the host-locality explanation accounts for.
	SameHostFraction float64 `col:"same_host_fraction"`
}

// LocalityBucket counts re-references with stack distance in [Lo, Hi] by
// class. Node -1 sums the nodes.
type LocalityBucket struct {
	Node    int               `col:"node"`
	Lo      int64             `col:"distance_lo"`
	Hi      int64             `col:"distance_hi"`
	ByClass [numClasses]int64 `col:"same_page,same_host,other_host,unknown"`
}

// LocalityResult is the outcome of [Locality].
type LocalityResult struct {
	Rows    []LocalityRow
	Buckets []LocalityBucket
	Files   []string
}

// Locality computes, for every node's log, the LRU stack distance of every
// re-reference (replay.LRUStack) and whether its previous occurrence came
// from a page of the same host, from the source column and the page log. It
// reports hits at each size split by class and the distribution of stack
// distances on log2 buckets (bucket b holds distances 2^b .. 2^(b+1)-1).
// One pass per node; memory per distinct URL of a node: the stack's ~50
// bytes plus 16 for the previous source.
func Locality(cfg LocalityConfig) (*LocalityResult, error) {
	sizes, err := cacheSizes(cfg.Sizes, "locality")
	if err != nil {
		return nil, err
	}
	info, pages, err := readCrawlPages(cfg.Input)
	if err != nil {
		return nil, err
	}
	pageHost := pages.hosts()
	clear(pages)
	res := &LocalityResult{}
	totals := make([]LocalityRow, len(sizes))
	var totalBuckets [64][numClasses]int64
	maxSize := int64(sizes[len(sizes)-1])
	type prev struct{ source, host uint64 }
	rows := cfg.pass("locality")
	defer rows.finish()
	for _, node := range info.nodes {
		stack, err := replay.NewLRUStack([]int{1}, 0)
		if err != nil {
			return nil, err
		}
		last := map[uint64]prev{}
		bins := make([][numClasses]int64, len(sizes))
		var buckets [64][numClasses]int64
		var requests int64
		err = rows.eachNode(node, func(rec *Rec) error {
			requests++
			fp := fingerprint.URL(rec.URL)
			cur := prev{source: rec.Source}
			if rec.Source != 0 {
				cur.host = pageHost[rec.Source] // 0 when unknown
			}
			d := stack.Access(fp)
			if d > 0 {
				p := last[fp]
				class := ClassUnknown
				switch {
				case cur.source != 0 && p.source == cur.source:
					class = ClassSamePage
				case cur.host != 0 && p.host != 0 && p.host == cur.host:
					class = ClassSameHost
				case cur.host != 0 && p.host != 0:
					class = ClassOtherHost
				}
				buckets[bits.Len64(uint64(d))-1][class]++
				if i := sort.SearchInts(sizes, int(min(d, maxSize+1))); i < len(sizes) {
					bins[i][class]++
				}
			}
			last[fp] = cur
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := stack.Err(); err != nil {
			return nil, fmt.Errorf("scenario: node %d: %w", node, err)
		}
		var cum [numClasses]int64
		for i, k := range sizes {
			r := LocalityRow{Node: node, Size: k, Requests: requests}
			for c := range numClasses {
				cum[c] += bins[i][c]
				r.ByClass[c] = cum[c]
				totals[i].ByClass[c] += cum[c]
			}
			totals[i].Node, totals[i].Size = -1, k
			totals[i].Requests += requests
			res.Rows = append(res.Rows, r.finish())
		}
		res.Buckets = append(res.Buckets, bucketRows(node, &buckets)...)
		for b := range buckets {
			for c := range numClasses {
				totalBuckets[b][c] += buckets[b][c]
			}
		}
	}
	for _, t := range totals {
		res.Rows = append(res.Rows, t.finish())
	}
	res.Buckets = append(res.Buckets, bucketRows(-1, &totalBuckets)...)
	return res, cfg.save(res, &res.Files, cfg)
}

// finish fills the totals and fractions from ByClass.
func (r LocalityRow) finish() LocalityRow {
	r.Hits = 0
	for _, v := range r.ByClass {
		r.Hits += v
	}
	r.HitRate = ratio(float64(r.Hits), float64(r.Requests))
	same := r.ByClass[ClassSamePage] + r.ByClass[ClassSameHost]
	r.SameHostFraction = ratio(float64(same), float64(same+r.ByClass[ClassOtherHost]))
	return r
}

// bucketRows lists the non-empty buckets up to the last non-empty one.
func bucketRows(node int, b *[64][numClasses]int64) []LocalityBucket {
	last := -1
	for i := range b {
		if b[i] != [numClasses]int64{} {
			last = i
		}
	}
	var rows []LocalityBucket
	for i := 0; i <= last; i++ {
		rows = append(rows, LocalityBucket{Node: node, Lo: 1 << i, Hi: 1<<(i+1) - 1, ByClass: b[i]})
	}
	return rows
}

// Tables returns the hits table (locality) and the reuse-distance table
// (locality-reuse).
func (res *LocalityResult) Tables() []*Table {
	return []*Table{rowTable("locality", res.Rows), rowTable("locality-reuse", res.Buckets)}
}

func (res *LocalityResult) write(dir string, plots bool, meta tracefile.TableMeta) ([]string, error) {
	return writeResult(dir, meta, res.Tables(), plots, func() []figure {
		hit, same := series{name: "LRU hit rate"}, series{name: "hits from a page of the same host (of known hits)"}
		for _, r := range res.Rows {
			if r.Node == -1 {
				x := math.Log2(float64(r.Size))
				hit.xys = append(hit.xys, plotter.XY{X: x, Y: r.HitRate})
				same.xys = append(same.xys, plotter.XY{X: x, Y: r.SameHostFraction})
			}
		}
		names := [numClasses]string{"same page", "same host, other page", "other host", "unknown source"}
		lines := make([]series, numClasses)
		var all int64
		for _, r := range res.Buckets {
			if r.Node == -1 {
				for _, v := range r.ByClass {
					all += v
				}
			}
		}
		for c := range numClasses {
			lines[c].name = names[c]
			for _, r := range res.Buckets {
				if r.Node == -1 {
					lines[c].xys = append(lines[c].xys, plotter.XY{X: math.Log2(float64(r.Lo)), Y: ratio(float64(r.ByClass[c]), float64(all))})
				}
			}
		}
		return []figure{
			{"locality", "host locality of LRU hits (all nodes)",
				axis{label: "LRU cache size (entries, log2 scale)", log2: true}, axis{label: "fraction", lo: 0, hi: 1}, []series{hit, same}},
			{"locality-reuse", "LRU stack distance of re-references by source (all nodes)",
				axis{label: "stack distance (log2 bucket)", log2: true}, axis{label: "fraction of re-references"}, lines},
		}
	})
}
