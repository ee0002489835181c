package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// LiveReassign is one reassignment a live crawl over --peers logged in a
// node's events.jsonl (docs/trace-format.md): the node, when, the nodes
// that left and joined, and the hosts that node had seen that changed
// owner, of which HostsMovedOther were neither a leaving node's nor went
// to a joining one (0 under consistent hashing). [NodeLoss] reports them
// beside its simulation, so a simulated node loss can be compared with a
// live one.
type LiveReassign struct {
	Node            int       `col:"node"`
	Time            time.Time `col:"time"`
	Left            []int     `col:"left"`
	Joined          []int     `col:"joined"`
	Live            []int
	HostsMoved      int   `col:"hosts_moved"`
	HostsMovedOther int   `col:"hosts_moved_other"`
	HostsIn         int   `col:"hosts_in"` // hosts this node took over
	URLsRerouted    int64 `col:"urls_rerouted"`
}

// ReadLiveReassigns reads the reassign events of every node of the crawl
// in dir, in time order. A crawl without event logs has none.
func ReadLiveReassigns(dir string) ([]LiveReassign, error) {
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		return nil, err
	}
	var out []LiveReassign
	for _, n := range nodes {
		p := filepath.Join(tracefile.NodeDir(dir, n), tracefile.EventsName)
		evs, err := tracefile.ReadEvents(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
		for _, e := range evs {
			if e.Event != tracefile.EventReassign {
				continue
			}
			out = append(out, LiveReassign{Node: e.Node, Time: e.Time, Left: e.Left, Joined: e.Joined, Live: e.Live,
				HostsMoved: e.HostsMoved, HostsMovedOther: e.HostsMovedOther, HostsIn: len(e.HostsIn), URLsRerouted: e.URLsRerouted})
		}
	}
	slices.SortStableFunc(out, func(a, b LiveReassign) int { return a.Time.Compare(b.Time) })
	return out, nil
}
