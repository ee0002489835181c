package scenario_test

import (
	"fmt"
	"log"
	"os"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay/scenario"
)

// Example re-partitions a tiny one-node crawl over two nodes with host
// hashing and with per-URL hashing: the URL partitioner scatters a host's
// links over both nodes, so many more of them cross the network.
func Example() {
	dir, err := os.MkdirTemp("", "scenario-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	nodeDir := tracefile.NodeDir(dir, 0)
	os.MkdirAll(nodeDir, 0o755)
	meta := tracefile.Meta{Kind: tracefile.KindURLs, CrawlID: "example", Node: 0, Nodes: 1, Partitioner: "host"}
	w, err := tracefile.CreateURLWriter(nodeDir, meta, tracefile.DefaultWriterConfig())
	if err != nil {
		log.Fatal(err)
	}
	w.Append(tracefile.URLRecord{URL: "http://a.test/", Kind: tracefile.URLSeed})
	for i := range 40 { // page 1 (http://a.test/) links to 40 pages of its own host
		w.Append(tracefile.URLRecord{URL: fmt.Sprintf("http://a.test/p%d", i), Kind: tracefile.URLLink, Source: 1})
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	meta.Kind = tracefile.KindPages
	pw, err := tracefile.CreatePageWriter(nodeDir, meta, tracefile.DefaultWriterConfig())
	if err != nil {
		log.Fatal(err)
	}
	pw.Append(tracefile.PageRecord{ID: 1, URL: "http://a.test/", Status: 200})
	if err := pw.Close(); err != nil {
		log.Fatal(err)
	}

	cfg := scenario.DefaultPartitionConfig()
	cfg.Input, cfg.Nodes, cfg.Partitioners = dir, []int{2}, []string{"host", "url"}
	res, err := scenario.Partition(cfg)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Rows {
		fmt.Printf("%s N=%d: %d of %d URLs cross, busiest node owns %d\n", r.Partitioner, r.Nodes, r.Cross, r.URLs, r.MaxURLs)
	}
	// Output:
	// host N=2: 0 of 41 URLs cross, busiest node owns 41
	// url N=2: 26 of 41 URLs cross, busiest node owns 26
}
