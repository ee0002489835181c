package condense_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Condense a two-node raw trace: node 0 logged four URLs, one of which its
// host splitter assigned to node 1 (a cross URL).
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "condense-example")
	defer os.RemoveAll(dir)
	raw, out := filepath.Join(dir, "crawl"), filepath.Join(dir, "condensed")
	for node, urls := range [][]string{{"http://a.test/", "http://a.test/x", "http://b.test/", "http://a.test/"}, {"http://b.test/"}} {
		w, _ := tracefile.CreateURLWriter(tracefile.NodeDir(raw, node), tracefile.Meta{Node: node, Nodes: 2}, tracefile.WriterConfig{})
		for _, u := range urls {
			dest := uint16(0)
			if u == "http://b.test/" {
				dest = 1
			}
			w.Append(tracefile.URLRecord{URL: u, Kind: tracefile.URLLink, Dest: dest})
		}
		w.Close()
	}
	rep, err := condense.Run(context.Background(), condense.Config{Input: raw, Output: out})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range rep.PerNode {
		fmt.Printf("node %d: %d rows, %d cross, %d distinct URLs\n", n.Node, n.Rows, n.CrossRows, n.DistinctURLs)
	}
	fmt.Printf("total: %d distinct URLs, %d collisions\n", rep.Total.DistinctURLs, rep.Total.CollisionPairs)
	// Output:
	// node 0: 4 rows, 1 cross, 3 distinct URLs
	// node 1: 1 rows, 0 cross, 1 distinct URLs
	// total: 3 distinct URLs, 0 collisions
}
