package scenario

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

// ThreadsConfig configures the per-thread against global cache question
// ([Threads], the paper's open question 2). It writes threads.csv/.arrow and
// plots threads.png/.svg.
type ThreadsConfig struct {
	Common
	// Sizes are the total cache sizes k per node.
	Sizes []int
	// Workers is the number of threads W sharing k; 0 means the number of
	// distinct workers in each node's log.
	Workers int
}

// DefaultThreadsConfig returns k = 2^0 .. 2^20 with W from the trace.
func DefaultThreadsConfig() ThreadsConfig {
	sizes := replay.PaperSizes()[:21] // 2^0 .. 2^20
	return ThreadsConfig{Sizes: sizes, Common: Common{Plots: true}}
}

// ThreadsRow is one (node, k). Node -1 sums the nodes.
type ThreadsRow struct {
	Node     int   `col:"node"`
	Size     int   `col:"size"`     // k, the total cache entries of the node
	Workers  int   `col:"workers"`  // W (for node -1: the largest W of the nodes)
	Requests int64 `col:"requests"` // URLs logged by the node
	// GlobalMisses are the misses of one LRU cache of k entries shared by
	// all the node's threads, fed the node's log in order.
	GlobalMisses   int64   `col:"global_misses"`
	GlobalMissRate float64 `col:"global_miss_rate"`
	// ThreadSize is k/W (rounded down; 0 is no cache at all, -1 on the sum
	// row when the nodes' W differ); ThreadMisses are the misses of W LRU
	// caches of ThreadSize entries, each fed only its worker's URLs.
	ThreadSize     int     `col:"thread_size"`
	ThreadMisses   int64   `col:"thread_misses"`
	ThreadMissRate float64 `col:"thread_miss_rate"`
}

// ThreadsResult is the outcome of [Threads].
type ThreadsResult struct {
	Rows  []ThreadsRow
	Files []string
}

// Threads compares, per node, one LRU cache of k entries shared by all
// threads with one LRU cache of k/W entries per thread. LRU is a stack
// algorithm, so one pass computing stack distances (replay.LRUStack) gives
// exact hit counts at every size, and W need not be known before the pass.
// Memory: the stacks hold each distinct URL once per worker that logged it,
// plus 8 bytes per entry of the largest size for the distance histogram.
func Threads(cfg ThreadsConfig) (*ThreadsResult, error) {
	sizes, err := cacheSizes(cfg.Sizes, "threads")
	if err != nil {
		return nil, err
	}
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("%w: scenario: negative worker count %d", tracefile.ErrBadInput, cfg.Workers)
	}
	info, err := readCrawlInfo(cfg.Input)
	if err != nil {
		return nil, err
	}
	maxSize := sizes[len(sizes)-1]
	res := &ThreadsResult{}
	totals := make([]ThreadsRow, len(sizes))
	for i := range totals {
		totals[i] = ThreadsRow{Node: -1, Size: sizes[i]}
	}
	threadHist := make([]int64, maxSize+1) // per-worker stack distance -> count
	rows := cfg.pass("threads")
	defer rows.finish()
	for _, node := range info.nodes {
		clear(threadHist)
		global, err := replay.NewLRUStack([]int{1}, 0)
		if err != nil {
			return nil, err
		}
		globalBins := make([]int64, len(sizes)) // distances in (sizes[i-1], sizes[i]]
		workers := map[uint16]*replay.LRUStack{}
		var requests int64
		err = rows.eachNode(node, func(rec *Rec) error {
			requests++
			fp := fingerprint.URL(rec.URL)
			if d := global.Access(fp); d > 0 {
				if i := sort.SearchInts(sizes, int(min(d, int64(maxSize)+1))); i < len(sizes) {
					globalBins[i]++
				}
			}
			ws := workers[rec.Worker]
			if ws == nil {
				ws, _ = replay.NewLRUStack([]int{1}, 0)
				workers[rec.Worker] = ws
			}
			if d := ws.Access(fp); d > 0 && d <= int64(maxSize) {
				threadHist[d]++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := global.Err(); err != nil {
			return nil, fmt.Errorf("scenario: node %d: %w", node, err)
		}
		for _, ws := range workers {
			if err := ws.Err(); err != nil {
				return nil, fmt.Errorf("scenario: node %d: %w", node, err)
			}
		}
		w := cfg.Workers
		if w == 0 {
			w = max(1, len(workers))
		}
		// threadCum[s] = per-thread hits with caches of s entries.
		var globalHits, threadCum int64
		s := 0
		for i, k := range sizes {
			globalHits += globalBins[i]
			for s < k/w {
				s++
				threadCum += threadHist[s]
			}
			r := ThreadsRow{Node: node, Size: k, Workers: w, Requests: requests, GlobalMisses: requests - globalHits,
				ThreadSize: k / w, ThreadMisses: requests - threadCum}
			r.GlobalMissRate = ratio(float64(r.GlobalMisses), float64(requests))
			r.ThreadMissRate = ratio(float64(r.ThreadMisses), float64(requests))
			res.Rows = append(res.Rows, r)
			t := &totals[i]
			if t.Workers != 0 && t.Workers != w {
				t.ThreadSize = -1
			} else if t.ThreadSize != -1 {
				t.ThreadSize = k / w
			}
			t.Workers = max(t.Workers, w)
			t.Requests += requests
			t.GlobalMisses += r.GlobalMisses
			t.ThreadMisses += r.ThreadMisses
		}
	}
	for _, t := range totals {
		t.GlobalMissRate = ratio(float64(t.GlobalMisses), float64(t.Requests))
		t.ThreadMissRate = ratio(float64(t.ThreadMisses), float64(t.Requests))
		res.Rows = append(res.Rows, t)
	}
	return res, cfg.save(res, &res.Files, cfg)
}

// Tables returns the threads table.
func (res *ThreadsResult) Tables() []*Table {
	return []*Table{rowTable("threads", res.Rows)}
}

func (res *ThreadsResult) write(dir string, plots bool, meta tracefile.TableMeta) ([]string, error) {
	return writeResult(dir, meta, res.Tables()[:1], plots, func() []figure {
		// W is defined in the legend: the fetch workers of a node (the
		// largest count of the nodes, when they differ).
		w := 0
		for _, r := range res.Rows {
			if r.Node == -1 {
				w = max(w, r.Workers)
			}
		}
		g := series{name: "one shared LRU cache of k entries"}
		th := series{name: fmt.Sprintf("W = %d fetch workers, one LRU cache of k/W each", w)}
		for _, r := range res.Rows {
			if r.Node == -1 {
				x := math.Log2(float64(r.Size))
				g.xys = append(g.xys, plotter.XY{X: x, Y: r.GlobalMissRate})
				th.xys = append(th.xys, plotter.XY{X: x, Y: r.ThreadMissRate})
			}
		}
		return []figure{{"threads", "per-thread vs global URL cache (all nodes)",
			axis{label: "total cache size k per node (entries, log2 scale)", log2: true}, axis{label: "miss rate", lo: 0, hi: 1}, []series{g, th}}}
	})
}
