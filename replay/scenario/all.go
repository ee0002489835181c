package scenario

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// SummaryName is the file [All] writes its summary to.
const SummaryName = "scenario-summary.json"

// AllConfig configures [All].
type AllConfig struct {
	// Input is the raw crawl directory.
	Input string
	// OutDir receives every question's tables and plots and
	// scenario-summary.json.
	OutDir string
	// Order is the stream order of the questions that read the whole
	// crawl's stream (partition, node-loss).
	Order string
	// Plots draws every question's plots.
	Plots bool
	// Progress, when not nil, receives each question's progress lines.
	Progress io.Writer `json:"-"`
	// Reading is how the crawl's URL logs are read: cut segments are
	// reported or, with Strict, refused.
	Reading Reading `json:"-"`
}

// Summary is scenario-summary.json: a small machine-readable digest of
// every question, for notebooks and demos. Floats that are undefined (an
// empty trace) are written as null.
type Summary struct {
	Input       string `json:"input"`
	Nodes       int    `json:"nodes"`       // the recorded crawl's N
	Partitioner string `json:"partitioner"` // the recorded partitioner
	URLs        int64  `json:"urls"`
	Hosts       int64  `json:"hosts"`
	Distinct    int64  `json:"distinct_urls"`
	// Attributed, Seeds and Fallback say how extracting nodes were found
	// (see the package doc).
	Attributed int64 `json:"attributed"`
	Seeds      int64 `json:"seeds"`
	Fallback   int64 `json:"fallback"`

	Partition     []PartitionDigest `json:"partition"`
	SplitterCache []CacheDigest     `json:"splitter_cache"`
	Threads       []ThreadsDigest   `json:"threads"`
	NodeLoss      []NodeLossDigest  `json:"node_loss"`
	Locality      []LocalityDigest  `json:"locality"`
	Files         []string          `json:"files"`
	Defaults      map[string]any    `json:"defaults"`
	Notes         []string          `json:"notes,omitempty"`
}

// The digests below are columns of each question's first table, named by
// their json tags ([digest]); a float that is undefined is null.

// PartitionDigest is one (partitioner, N) of the partition question.
type PartitionDigest struct {
	Partitioner    string   `json:"partitioner"`
	Nodes          int      `json:"nodes"`
	CrossFraction  *float64 `json:"cross_fraction"`
	CrossBytes     int64    `json:"cross_bytes"`
	BalanceURLs    *float64 `json:"balance_urls"`
	BalanceHosts   *float64 `json:"balance_hosts"`
	DestMismatches *int64   `json:"dest_mismatches"` // null when not applicable
}

// CacheDigest is one (policy, size) of the splitter-cache question, summed
// over the nodes.
type CacheDigest struct {
	Policy       string   `json:"policy"`
	Size         int      `json:"size"`
	Cross        int64    `json:"cross"`
	Sent         int64    `json:"sent"`
	SentFraction *float64 `json:"sent_fraction"`
	Batches      int64    `json:"batches"`
}

// ThreadsDigest is one size of the threads question, summed over the
// nodes.
type ThreadsDigest struct {
	Size           int      `json:"size"`
	Workers        int      `json:"workers"`
	GlobalMissRate *float64 `json:"global_miss_rate"`
	ThreadMissRate *float64 `json:"thread_miss_rate"`
}

// NodeLossDigest is one partitioner of the node-loss question.
type NodeLossDigest struct {
	Partitioner        string   `json:"partitioner"`
	Event              string   `json:"event"`
	Node               int      `json:"node"`
	HostsMovedFraction *float64 `json:"hosts_moved_fraction"`
	HostsMovedOther    int64    `json:"hosts_moved_other"`
	Refetched          int64    `json:"refetched"`
	BalanceHosts       *float64 `json:"balance_hosts"`
}

// LocalityDigest is one size of the locality question, summed over the
// nodes.
type LocalityDigest struct {
	Size             int      `json:"size"`
	HitRate          *float64 `json:"hit_rate"`
	SameHostFraction *float64 `json:"same_host_fraction"`
	SamePage         int64    `json:"same_page"`
	SameHost         int64    `json:"same_host"`
	OtherHost        int64    `json:"other_host"`
	Unknown          int64    `json:"unknown"`
}

// common is the part of cfg every question shares.
func (cfg AllConfig) common() Common {
	return Common{Input: cfg.Input, OutDir: cfg.OutDir, Plots: cfg.Plots, Progress: cfg.Progress, Reading: cfg.Reading}
}

// All runs every question with its defaults (partition at N = 1..64 and
// also at the recorded N, node loss removing node 0 half way when the crawl
// has at least two nodes) into cfg.OutDir and writes scenario-summary.json.
func All(cfg AllConfig) (*Summary, error) {
	if cfg.OutDir == "" {
		return nil, fmt.Errorf("%w: scenario: all needs an output directory", tracefile.ErrBadInput)
	}
	info, err := readCrawlInfo(cfg.Input)
	if err != nil {
		return nil, err
	}
	s := &Summary{Input: cfg.Input, Nodes: info.recorded, Partitioner: info.partitioner}

	common := cfg.common()
	pc := DefaultPartitionConfig()
	pc.Common, pc.Order = common, cfg.Order
	if i, found := slices.BinarySearch(pc.Nodes, info.recorded); !found {
		pc.Nodes = slices.Insert(pc.Nodes, i, info.recorded)
	}
	sc := DefaultSplitterCacheConfig()
	sc.Common = common
	tc := DefaultThreadsConfig()
	tc.Common = common
	nc := DefaultNodeLossConfig()
	nc.Common, nc.Order = common, cfg.Order
	if info.recorded < 2 {
		nc.Event = EventAdd
	}
	lc := DefaultLocalityConfig()
	lc.Common = common

	a := &asker{s: s}
	pr := ask(a, Partition, pc, &s.Partition, false)
	ask(a, SplitterCache, sc, &s.SplitterCache, true)
	ask(a, Threads, tc, &s.Threads, true)
	nr := ask(a, NodeLoss, nc, &s.NodeLoss, false)
	ask(a, Locality, lc, &s.Locality, true)
	if a.err != nil {
		return nil, a.err
	}
	s.Attributed, s.Seeds, s.Fallback = pr.Attributed, pr.Seeds, pr.Fallback
	if n := len(pr.Rows); n > 0 {
		s.URLs, s.Hosts = pr.Rows[n-1].URLs, pr.Rows[n-1].Hosts
	}
	if n := len(nr.Rows); n > 0 {
		s.Distinct = nr.Rows[n-1].Distinct
	}
	if pr.Fallback > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d URLs had no source page in the page log; their extracting node is the logging node mod N", pr.Fallback))
	}
	s.Defaults = map[string]any{
		"partition":      map[string]any{"nodes": pc.Nodes, "partitioners": pc.Partitioners, "framing_bytes": pc.FramingBytes},
		"splitter_cache": map[string]any{"policies": sc.Policies, "sizes": sc.Sizes, "batch": sc.Batch},
		"threads":        map[string]any{"sizes": tc.Sizes, "workers": "from the trace"},
		"node_loss":      map[string]any{"event": nc.Event, "node": nc.Node, "at": nc.At, "partitioners": nc.Partitioners},
		"locality":       map[string]any{"sizes": lc.Sizes},
	}

	path := filepath.Join(cfg.OutDir, SummaryName)
	s.Files = append(s.Files, path)
	if err := tracefile.WriteJSON(path, s); err != nil {
		return s, fmt.Errorf("scenario: %w", err)
	}
	return s, nil
}
