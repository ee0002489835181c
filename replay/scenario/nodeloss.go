package scenario

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// Node events of [NodeLoss].
const (
	EventRemove = "remove" // node Node dies
	EventAdd    = "add"    // a node with id N joins
)

// NodeLossConfig configures the node loss and addition what-if
// ([NodeLoss], UbiCrawler's contravariance). It writes node-loss.csv/.arrow
// and node-loss-nodes.csv/.arrow (and node-loss-live.csv/.arrow for a crawl
// that logged reassignments), and plots node-loss.png/.svg.
type NodeLossConfig struct {
	Common
	// Nodes is the crawl size N before the event; 0 means the recorded N.
	Nodes int
	// Event is EventRemove or EventAdd.
	Event string
	// Node is the id (0..N-1) of the node removed; adding always adds id N.
	Node int
	// At is the change point as a fraction of the stream's rows, used when
	// AtRow < 0.
	At float64
	// AtRow is the change point as a row index of the stream: rows before
	// it are assigned as before the event, rows from it on as after.
	AtRow int64
	// Partitioners to compare: "consistent" moves ids on its ring; the
	// hash-mod-N ones ("host", "url", "domain") are rebuilt for the new N,
	// their slots numbering the surviving ids in increasing order.
	Partitioners []string
	// Replicas per node of the consistent partitioner (0: its default).
	Replicas int
	// Order is the stream order (OrderTime or OrderNode).
	Order string
}

// DefaultNodeLossConfig removes node 0 half way through the stream and
// compares consistent hashing with host hash mod N.
func DefaultNodeLossConfig() NodeLossConfig {
	return NodeLossConfig{Event: EventRemove, At: 0.5, AtRow: -1, Partitioners: []string{"consistent", "host"},
		Order: OrderTime, Common: Common{Plots: true}}
}

// NodeLossRow is the outcome for one partitioner.
type NodeLossRow struct {
	Partitioner string `col:"partitioner"`
	Event       string `col:"event"`
	Node        int    `col:"node"` // the node removed or added
	NodesBefore int    `col:"nodes_before"`
	NodesAfter  int    `col:"nodes_after"`
	ChangeRow   int64  `col:"change_row"` // first row assigned after the event
	URLs        int64  `col:"urls"`       // rows of the stream
	Distinct    int64  `col:"distinct"`   // distinct URLs of the stream
	// Hosts are the distinct hosts of the stream; HostsMoved those whose
	// owner differs after the event (for the url partitioner, whose owner
	// is per URL, the owner of the host's first URL), and HostsMovedOther
	// those of them that neither belonged to the removed node nor went to
	// the added one: 0 for a contravariant assignment.
	Hosts              int64   `col:"hosts"`
	HostsMoved         int64   `col:"hosts_moved"`
	HostsMovedFraction float64 `col:"hosts_moved_fraction"`
	HostsMovedOther    int64   `col:"hosts_moved_other"`
	// MovedBefore counts the distinct URLs seen before the event whose
	// owner changed; Refetched those of them that occur again after it,
	// which the new owner's duplicate eliminator has never seen and would
	// fetch a second time. RefetchedFraction is Refetched / Distinct.
	MovedBefore       int64   `col:"moved_before"`
	Refetched         int64   `col:"refetched"`
	RefetchedFraction float64 `col:"refetched_fraction"`
	// BalanceURLs is max/mean over the nodes after the event of the URLs
	// they own among the rows after the event; BalanceHosts the same over
	// the distinct hosts of the whole stream.
	BalanceURLs  float64 `col:"balance_urls"`
	BalanceHosts float64 `col:"balance_hosts"`
}

// NodeLossNodeRow is one node's load after the event.
type NodeLossNodeRow struct {
	Partitioner string `col:"partitioner"`
	Node        int    `col:"node"`
	URLsAfter   int64  `col:"urls_after"` // rows after the event the node owns
	Hosts       int64  `col:"hosts"`      // distinct hosts it owns after the event
}

// NodeLossResult is the outcome of [NodeLoss].
type NodeLossResult struct {
	Rows  []NodeLossRow
	Nodes []NodeLossNodeRow
	// Live are the reassignments the crawl itself logged when it was run
	// over --peers with fail-over (see [ReadLiveReassigns]); empty for a
	// crawl that lost no node.
	Live  []LiveReassign
	Files []string
}

type lossRun struct {
	before, after func(string) int
	ids           []int // node ids after the event
	urlsAfter     map[int]int64
	hostsAfter    map[int]int64
	row           NodeLossRow
}

// newLossRun builds the before and after assignments of one partitioner.
func newLossRun(name string, cfg NodeLossConfig, n int) (*lossRun, error) {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	r := &lossRun{urlsAfter: map[int]int64{}, hostsAfter: map[int]int64{}}
	if cfg.Event == EventRemove {
		r.ids = slices.Delete(slices.Clone(ids), cfg.Node, cfg.Node+1)
	} else {
		r.ids = append(slices.Clone(ids), n)
	}
	if name == "consistent" {
		c := partition.NewConsistent(ids, cfg.Replicas)
		var c2 *partition.Consistent
		if cfg.Event == EventRemove {
			c2 = c.Without(cfg.Node)
		} else {
			c2 = c.With(n)
		}
		r.before, r.after = c.Node, c2.Node
	} else {
		p, err := partition.New(name, n, cfg.Replicas)
		if err != nil {
			return nil, fmt.Errorf("%w: scenario: %v", tracefile.ErrBadInput, err)
		}
		p2, err := partition.New(name, len(r.ids), cfg.Replicas)
		if err != nil {
			return nil, fmt.Errorf("%w: scenario: %v", tracefile.ErrBadInput, err)
		}
		r.before = p.Node
		r.after = func(u string) int { return r.ids[p2.Node(u)] }
	}
	r.row = NodeLossRow{Partitioner: name, Event: cfg.Event, Node: cfg.Node, NodesBefore: n, NodesAfter: len(r.ids)}
	if cfg.Event == EventAdd {
		r.row.Node = n
	}
	return r, nil
}

// NodeLoss removes or adds a node at a point of the crawl's URL stream and
// reports, for each partitioner, the hosts reassigned, the URLs that would
// be fetched twice, and the balance after the event. One pass (plus a
// counting pass when the change point is a fraction); memory holds 4 bytes
// of flags per distinct URL and a set of distinct hosts.
func NodeLoss(cfg NodeLossConfig) (*NodeLossResult, error) {
	if cfg.Event != EventRemove && cfg.Event != EventAdd {
		return nil, fmt.Errorf("%w: scenario: node event %q (want %s or %s)", tracefile.ErrBadInput, cfg.Event, EventRemove, EventAdd)
	}
	if len(cfg.Partitioners) == 0 || len(cfg.Partitioners) > 15 {
		return nil, fmt.Errorf("%w: scenario: node loss compares 1 to 15 partitioners, not %d", tracefile.ErrBadInput, len(cfg.Partitioners))
	}
	info, err := readCrawlInfo(cfg.Input)
	if err != nil {
		return nil, err
	}
	n := cfg.Nodes
	if n == 0 {
		n = info.recorded
	}
	if n < 1 || cfg.Event == EventRemove && (n < 2 || cfg.Node < 0 || cfg.Node >= n) {
		return nil, fmt.Errorf("%w: scenario: cannot %s node %d of a %d-node crawl", tracefile.ErrBadInput, cfg.Event, cfg.Node, n)
	}
	change := cfg.AtRow
	if change < 0 {
		if cfg.At < 0 || cfg.At > 1 || math.IsNaN(cfg.At) {
			return nil, fmt.Errorf("%w: scenario: change point %v is not a fraction in [0, 1]", tracefile.ErrBadInput, cfg.At)
		}
		rows, err := cfg.Reading.countRows(cfg.Input, info.nodes)
		if err != nil {
			return nil, err
		}
		change = int64(math.Floor(cfg.At * float64(rows)))
	}
	var runs []*lossRun
	for _, name := range cfg.Partitioners {
		r, err := newLossRun(name, cfg, n)
		if err != nil {
			return nil, err
		}
		r.row.ChangeRow = change
		runs = append(runs, r)
	}
	const seenBefore = 1
	movedBit := func(i int) uint32 { return 1 << (1 + 2*i) }
	countedBit := func(i int) uint32 { return 1 << (2 + 2*i) }
	flags := map[uint64]uint32{}
	hosts := hostIndex{}
	urls, err := cfg.each("node-loss", cfg.Order, func(rec *Rec) error {
		_, newHost := hosts.see(rec.URL)
		oldHost := !newHost
		fp := fingerprint.URL(rec.URL)
		f, seen := flags[fp]
		before := rec.Index < change
		for i, r := range runs {
			var ob, oa int
			if before && f&seenBefore == 0 || !oldHost || !before {
				ob, oa = r.before(rec.URL), r.after(rec.URL)
			}
			if !oldHost {
				r.hostsAfter[oa]++
				if ob != oa {
					r.row.HostsMoved++
					if !(cfg.Event == EventRemove && ob == cfg.Node || cfg.Event == EventAdd && oa == n) {
						r.row.HostsMovedOther++
					}
				}
			}
			switch {
			case before && f&seenBefore == 0:
				if ob != oa {
					f |= movedBit(i)
					r.row.MovedBefore++
				}
			case !before:
				r.urlsAfter[oa]++
				if f&movedBit(i) != 0 && f&countedBit(i) == 0 {
					f |= countedBit(i)
					r.row.Refetched++
				}
			}
		}
		if before {
			f |= seenBefore
		}
		if !seen || flags[fp] != f {
			flags[fp] = f
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &NodeLossResult{}
	if res.Live, err = ReadLiveReassigns(cfg.Input); err != nil {
		return nil, err
	}
	for _, r := range runs {
		row := &r.row
		row.URLs, row.Distinct, row.Hosts = urls, int64(len(flags)), int64(len(hosts))
		row.HostsMovedFraction = ratio(float64(row.HostsMoved), float64(row.Hosts))
		row.RefetchedFraction = ratio(float64(row.Refetched), float64(row.Distinct))
		ul := make([]int64, len(r.ids))
		hl := make([]int64, len(r.ids))
		for i, id := range r.ids {
			ul[i], hl[i] = r.urlsAfter[id], r.hostsAfter[id]
			res.Nodes = append(res.Nodes, NodeLossNodeRow{Partitioner: row.Partitioner, Node: id, URLsAfter: ul[i], Hosts: hl[i]})
		}
		_, _, row.BalanceURLs = balance(ul)
		_, _, row.BalanceHosts = balance(hl)
		res.Rows = append(res.Rows, *row)
	}
	return res, cfg.save(res, &res.Files, cfg)
}

// Tables returns the summary (node-loss) and per-node (node-loss-nodes)
// tables.
func (res *NodeLossResult) Tables() []*Table {
	tables := []*Table{rowTable("node-loss", res.Rows), rowTable("node-loss-nodes", res.Nodes)}
	if len(res.Live) > 0 {
		tables = append(tables, rowTable("node-loss-live", res.Live))
	}
	return tables
}

func (res *NodeLossResult) write(dir string, plots bool, meta tracefile.TableMeta) ([]string, error) {
	return writeResult(dir, meta, res.Tables(), plots, func() []figure {
		var lines []series
		for _, row := range res.Rows {
			var loads []int64
			for _, nr := range res.Nodes {
				if nr.Partitioner == row.Partitioner {
					loads = append(loads, nr.Hosts)
				}
			}
			_, mean, _ := balance(loads)
			slices.SortFunc(loads, func(a, b int64) int { return cmp.Compare(b, a) })
			s := series{name: fmt.Sprintf("%s (%.1f%% of hosts moved)", row.Partitioner, 100*row.HostsMovedFraction), style: row.Partitioner}
			for i, l := range loads {
				s.xys = append(s.xys, plotter.XY{X: float64(i + 1), Y: ratio(float64(l), mean)})
			}
			lines = append(lines, s)
		}
		title := "hosts per node after the event"
		if len(res.Rows) > 0 {
			title = fmt.Sprintf("hosts per node after %s node %d", map[string]string{EventRemove: "removing", EventAdd: "adding"}[res.Rows[0].Event], res.Rows[0].Node)
		}
		return []figure{{"node-loss", title, axis{label: "node rank (most loaded first)"}, axis{label: "hosts / mean hosts"}, lines}}
	})
}
