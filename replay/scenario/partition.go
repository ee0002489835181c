package scenario

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// PartitionConfig configures the partitioning what-if ([Partition]). It
// writes partition.csv/.arrow and partition-nodes.csv/.arrow, and plots
// partition-cross.png/.svg and partition-balance.png/.svg.
type PartitionConfig struct {
	Common
	// Nodes are the crawl sizes N to try.
	Nodes []int
	// Partitioners are partition.New names.
	Partitioners []string
	// Replicas per node of the consistent partitioner (0: its default).
	Replicas int
	// FramingBytes is added to each URL's length to estimate the bytes a
	// cross URL costs on the wire. The default, 20, is the recorder's peer
	// batch per URL beyond the URL text: a 4-byte url offset, a 4-byte kind
	// offset and about 4 bytes of kind text, and the 8-byte source id.
	FramingBytes int
	// Order is the stream order (OrderTime or OrderNode). Counts do not
	// depend on it; the order of written traces does.
	Order string
	// WriteTraces, when not "", receives per (partitioner, N) a directory
	// <partitioner>-n<N> with each node's condensed full and cross
	// subtraces (node-000.full.arrow, node-000.cross.arrow), which
	// `crawltrace replay` takes. Each (partitioner, N) costs one more pass
	// over the stream, so that at most 2N trace writers are open at once.
	WriteTraces string
}

// DefaultPartitionConfig returns N = 1, 2, 4, ..., 64 for every partitioner.
func DefaultPartitionConfig() PartitionConfig {
	return PartitionConfig{
		Nodes:        []int{1, 2, 4, 8, 16, 32, 64},
		Partitioners: partition.Names(),
		FramingBytes: 20,
		Order:        OrderTime,
		Common:       Common{Plots: true},
	}
}

// PartitionRow summarizes one (partitioner, N).
type PartitionRow struct {
	Partitioner string `col:"partitioner"`
	Nodes       int    `col:"nodes"`
	URLs        int64  `col:"urls"`  // rows of the stream
	Hosts       int64  `col:"hosts"` // distinct hosts of the stream
	// MaxURLs, MeanURLs and BalanceURLs describe the URLs each node owns
	// (receives from its own and its peers' host splitters): max, mean and
	// max/mean.
	MaxURLs      int64   `col:"max_urls"`
	MeanURLs     float64 `col:"mean_urls"`
	BalanceURLs  float64 `col:"balance_urls"`
	MaxHosts     int64   `col:"max_hosts"` // the distinct hosts a node owns URLs of
	MeanHosts    float64 `col:"mean_hosts"`
	BalanceHosts float64 `col:"balance_hosts"`
	// Cross counts the URLs whose owner is not the node that extracted them;
	// CrossFraction is Cross/URLs and CrossBytes their length plus
	// FramingBytes each.
	Cross         int64   `col:"cross"`
	CrossFraction float64 `col:"cross_fraction"`
	CrossBytes    int64   `col:"cross_bytes"`
	// DestMismatches counts rows whose owner differs from the recorded dest
	// column, for the recorded partitioner and N only (else -1, written as a
	// blank CSV cell, an Arrow null and a JSON null): 0 means the
	// re-partitioning reproduces the recording exactly.
	DestMismatches int64 `col:"dest_mismatches,nullneg"`
}

// PartitionNodeRow is one node of one (partitioner, N).
type PartitionNodeRow struct {
	Partitioner string `col:"partitioner"`
	Nodes       int    `col:"nodes"`
	Node        int    `col:"node"`
	URLs        int64  `col:"urls"`        // URLs the node owns
	Hosts       int64  `col:"hosts"`       // distinct hosts of those URLs
	Extracted   int64  `col:"extracted"`   // URLs entering the node's host splitter
	CrossOut    int64  `col:"cross_out"`   // of those, URLs sent to a peer
	CrossBytes  int64  `col:"cross_bytes"` // their estimated bytes on the wire
}

// PartitionResult is the outcome of [Partition].
type PartitionResult struct {
	Rows  []PartitionRow
	Nodes []PartitionNodeRow
	// How the extracting node of each URL was determined (see the package
	// doc): from the source page's URL in the page log (Attributed), as the
	// URL's own owner for seeds (Seeds), or from the logging node
	// (Fallback).
	Attributed, Seeds, Fallback int64
	Files                       []string
}

// partRun is the state of one (partitioner, N) during the pass.
type partRun struct {
	p         partition.Partitioner
	n         int
	checkDest bool
	row       PartitionRow
	owned     []int64
	extracted []int64
	crossOut  []int64
	crossB    []int64
	words     int      // bitset words per host
	hostBits  []uint64 // host index * words + node/64: node owns URLs of the host
	// hostOwner caches the owner of each host for the partitioners that
	// key on the host alone (all but "url"), by host index.
	hostKeyed bool
	hostOwner []int32
}

// extractor determines, per (partitioner, N), which node extracts the URLs
// of the current source page, caching the last page seen per logging node
// (a page's links are logged together).
type extractor struct {
	pages pageIndex
	last  map[int]*srcEntry
}

type srcEntry struct {
	id    uint64
	known bool
	ext   []int
}

func newPartRuns(names []string, nodes []int, replicas int, info crawlInfo) ([]*partRun, error) {
	var runs []*partRun
	for _, name := range names {
		for _, n := range nodes {
			p, err := partition.New(name, n, replicas)
			if err != nil {
				return nil, fmt.Errorf("%w: scenario: %v", tracefile.ErrBadInput, err)
			}
			r := &partRun{p: p, n: n, owned: make([]int64, n), extracted: make([]int64, n),
				crossOut: make([]int64, n), crossB: make([]int64, n), words: (n + 63) / 64}
			r.checkDest = p.Name() == info.partitioner && n == info.recorded
			r.hostKeyed = p.Name() != "url"
			r.row = PartitionRow{Partitioner: p.Name(), Nodes: n, DestMismatches: -1}
			if r.checkDest {
				r.row.DestMismatches = 0
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// exts returns the extracting node of rec's source page under every run,
// or nil when the page is unknown.
func (x *extractor) exts(rec *Rec, runs []*partRun) []int {
	e := x.last[rec.Node]
	if e == nil {
		e = &srcEntry{ext: make([]int, len(runs))}
		e.id = rec.Source + 1 // anything but rec.Source
		x.last[rec.Node] = e
	}
	if e.id != rec.Source {
		e.id = rec.Source
		u, ok := x.pages[rec.Source]
		e.known = ok && rec.Source != 0
		if e.known {
			for i, r := range runs {
				e.ext[i] = r.p.Node(u)
			}
		}
	}
	if !e.known {
		return nil
	}
	return e.ext
}

// extractorOf returns the node extracting rec under run i, given the
// owner of rec's URL, and how it was determined (0 page, 1 seed, 2
// fallback).
func extractorOf(rec *Rec, exts []int, i, owner, n int) (int, int) {
	switch {
	case rec.Kind == tracefile.URLSeed:
		return owner, 1
	case exts != nil:
		return exts[i], 0
	}
	return rec.Node % n, 2
}

// Partition re-partitions the crawl's URL stream with every partitioner at
// every N and reports load, balance and cross traffic, in one pass (plus one
// pass per (partitioner, N) with WriteTraces).
func Partition(cfg PartitionConfig) (*PartitionResult, error) {
	if cfg.FramingBytes < 0 {
		return nil, fmt.Errorf("%w: scenario: negative framing bytes %d", tracefile.ErrBadInput, cfg.FramingBytes)
	}
	if len(cfg.Nodes) == 0 || len(cfg.Partitioners) == 0 {
		return nil, fmt.Errorf("%w: scenario: partition needs at least one N and one partitioner", tracefile.ErrBadInput)
	}
	info, pages, err := readCrawlPages(cfg.Input)
	if err != nil {
		return nil, err
	}
	runs, err := newPartRuns(cfg.Partitioners, cfg.Nodes, cfg.Replicas, info)
	if err != nil {
		return nil, err
	}
	res := &PartitionResult{}
	x := &extractor{pages: pages, last: map[int]*srcEntry{}}
	hostIdx := hostIndex{}
	urls, err := cfg.each("partition", cfg.Order, func(rec *Rec) error {
		hi, first := hostIdx.see(rec.URL)
		if first {
			for _, r := range runs {
				r.hostBits = append(r.hostBits, make([]uint64, r.words)...)
				if r.hostKeyed {
					r.hostOwner = append(r.hostOwner, int32(r.p.Node(rec.URL)))
				}
			}
		}
		exts := x.exts(rec, runs)
		wire := int64(len(rec.URL) + cfg.FramingBytes)
		for i, r := range runs {
			var owner int
			if r.hostKeyed {
				owner = int(r.hostOwner[hi])
			} else {
				owner = r.p.Node(rec.URL)
			}
			ext, how := extractorOf(rec, exts, i, owner, r.n)
			if i == 0 {
				switch how {
				case 0:
					res.Attributed++
				case 1:
					res.Seeds++
				default:
					res.Fallback++
				}
			}
			r.owned[owner]++
			r.extracted[ext]++
			r.hostBits[hi*r.words+owner/64] |= 1 << (owner % 64)
			if owner != ext {
				r.crossOut[ext]++
				r.crossB[ext] += wire
			}
			if r.checkDest && int(rec.Dest) != owner {
				r.row.DestMismatches++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		hosts := make([]int64, r.n)
		for hi := range len(hostIdx) {
			for w, word := range r.hostBits[hi*r.words : (hi+1)*r.words] {
				for word != 0 {
					hosts[w*64+bits.TrailingZeros64(word)]++
					word &= word - 1
				}
			}
		}
		row := &r.row
		row.URLs, row.Hosts = urls, int64(len(hostIdx))
		row.MaxURLs, row.MeanURLs, row.BalanceURLs = balance(r.owned)
		row.MaxHosts, row.MeanHosts, row.BalanceHosts = balance(hosts)
		for node := range r.n {
			row.Cross += r.crossOut[node]
			row.CrossBytes += r.crossB[node]
			res.Nodes = append(res.Nodes, PartitionNodeRow{Partitioner: row.Partitioner, Nodes: r.n, Node: node,
				URLs: r.owned[node], Hosts: hosts[node], Extracted: r.extracted[node], CrossOut: r.crossOut[node], CrossBytes: r.crossB[node]})
		}
		row.CrossFraction = ratio(float64(row.Cross), float64(urls))
		res.Rows = append(res.Rows, *row)
	}
	if cfg.WriteTraces != "" {
		for _, r := range runs {
			files, err := writePartitionTraces(cfg, info, pages, r.p)
			res.Files = append(res.Files, files...)
			if err != nil {
				return res, err
			}
		}
	}
	return res, cfg.save(res, &res.Files, cfg)
}

// PartitionTraceDir is the directory, under PartitionConfig.WriteTraces, of
// the subtraces of one (partitioner, N).
func PartitionTraceDir(partitioner string, nodes int) string {
	return partitioner + "-n" + strconv.Itoa(nodes)
}

// writePartitionTraces writes each node's full and cross subtraces under p:
// node m's full trace holds, in stream order, the fingerprints of the URLs m
// extracts; its cross trace those of them that m does not own.
func writePartitionTraces(cfg PartitionConfig, info crawlInfo, pages pageIndex, p partition.Partitioner) (files []string, err error) {
	dir := filepath.Join(cfg.WriteTraces, PartitionTraceDir(p.Name(), p.Nodes()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	n := p.Nodes()
	full := make([]*tracefile.CondensedWriter, n)
	cross := make([]*tracefile.CondensedWriter, n)
	defer func() {
		if err != nil {
			for _, w := range slices.Concat(full, cross) {
				if w != nil {
					w.Abort()
				}
			}
		}
	}()
	for m := range n {
		for _, sub := range []string{tracefile.SubtraceFull, tracefile.SubtraceCross} {
			meta := tracefile.Meta{Kind: tracefile.KindCondensed, CrawlID: info.crawlID, Node: m, Nodes: n,
				Partitioner: p.Name(), Subtrace: sub}
			w, err := tracefile.CreateCondensed(filepath.Join(dir, tracefile.CondensedName(m, sub)), meta)
			if err != nil {
				return nil, fmt.Errorf("scenario: %w", err)
			}
			if sub == tracefile.SubtraceFull {
				full[m] = w
			} else {
				cross[m] = w
			}
		}
	}
	runs := []*partRun{{p: p, n: n}}
	x := &extractor{pages: pages, last: map[int]*srcEntry{}}
	err = cfg.Reading.Each(cfg.Input, cfg.Order, func(rec *Rec) error {
		owner := p.Node(rec.URL)
		ext, _ := extractorOf(rec, x.exts(rec, runs), 0, owner, n)
		fp := fingerprint.URL(rec.URL)
		if err := full[ext].Append(fp); err != nil {
			return fmt.Errorf("scenario: %w", err)
		}
		if owner != ext {
			if err := cross[ext].Append(fp); err != nil {
				return fmt.Errorf("scenario: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for m := range n {
		for _, w := range []**tracefile.CondensedWriter{&full[m], &cross[m]} {
			cerr := (*w).Close()
			*w = nil
			if cerr != nil && err == nil {
				err = fmt.Errorf("scenario: %w", cerr)
			}
		}
		files = append(files, filepath.Join(dir, tracefile.CondensedName(m, tracefile.SubtraceFull)),
			filepath.Join(dir, tracefile.CondensedName(m, tracefile.SubtraceCross)))
	}
	return files, err
}

// Tables returns the summary table (partition) and the per-node table
// (partition-nodes).
func (res *PartitionResult) Tables() []*Table {
	return []*Table{rowTable("partition", res.Rows), rowTable("partition-nodes", res.Nodes)}
}

func (res *PartitionResult) write(dir string, plots bool, meta tracefile.TableMeta) ([]string, error) {
	return writeResult(dir, meta, res.Tables(), plots, func() []figure {
		var crossLines, balLines []series
		for _, r := range res.Rows {
			if len(crossLines) == 0 || crossLines[len(crossLines)-1].name != r.Partitioner {
				crossLines = append(crossLines, series{name: r.Partitioner})
				balLines = append(balLines, series{name: r.Partitioner})
			}
			x := math.Log2(float64(r.Nodes))
			crossLines[len(crossLines)-1].xys = append(crossLines[len(crossLines)-1].xys, plotter.XY{X: x, Y: r.CrossFraction})
			balLines[len(balLines)-1].xys = append(balLines[len(balLines)-1].xys, plotter.XY{X: x, Y: r.BalanceURLs})
		}
		nodes := axis{label: "nodes N (log2 scale)", log2: true}
		return []figure{
			{"partition-cross", "URLs sent to a peer", nodes, axis{label: "cross fraction", lo: 0, hi: 1}, crossLines},
			{"partition-balance", "load balance (URLs owned)", nodes, axis{label: "max / mean URLs per node"}, balLines},
		}
	})
}
