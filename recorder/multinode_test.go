package recorder

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// smallWeb serves a deterministic 5-host x 20-page web without traps.
func smallWeb(t *testing.T) (*testweb.Web, string) {
	t.Helper()
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 5, 20, 0
	wc.CrawlDelay = 0
	srv := crawltest.Serve(t, wc)
	return srv.Web(), srv.Addr()
}

func webConfig(t *testing.T, w *testweb.Web, addr string) Config {
	cfg := localConfig(t, addr, w.Seeds()...)
	cfg.Workers = 1
	cfg.CrawlID = "test"
	return cfg
}

// TestMultiNodeSameTrace crawls one web with 1 node, 4 in-process nodes and
// 4 nodes over loopback TCP: the URL logs of all nodes together hold exactly
// the same multiset of URLs.
func TestMultiNodeSameTrace(t *testing.T) {
	crawltest.Waiting(t, "crawls a web three times")
	w, addr := smallWeb(t)
	cfg := webConfig(t, w, addr)
	res := runCrawl(t, cfg)
	want := urlMultiset(readURLs(t, cfg.OutDir))
	if res.Stats.StopReason != StopDone || len(want) < 500 {
		t.Fatalf("1-node crawl: %s, %d URLs", res.Stats.StopReason, len(want))
	}
	if res.Stats.Redirects == 0 || res.Stats.RobotsExcluded == 0 || res.Stats.HTMLPages < 50 {
		t.Errorf("test web too tame: %+v", res.Stats)
	}

	cfg = webConfig(t, w, addr)
	cfg.Nodes = 4
	res = runCrawl(t, cfg)
	got := readURLs(t, cfg.OutDir)
	compareMultisets(t, "in-process", want, urlMultiset(got))
	if res.Stats.BatchesSent == 0 || res.Stats.Cross == 0 {
		t.Errorf("no cross traffic: %+v", res.Stats)
	}
	for _, r := range got {
		if int(r.Dest) != cfg4part(t, r.URL) {
			t.Fatalf("dest %d of %s disagrees with the partitioner", r.Dest, r.URL)
		}
	}

	dir := t.TempDir()
	runTCP(t, w, addr, dir, 4, -1)
	compareMultisets(t, "tcp", want, urlMultiset(readURLs(t, dir)))
}

// TestPeerDownThenBack starts one node of a TCP crawl late: batches for it
// wait in its peers' queues, and no URL is lost.
func TestPeerDownThenBack(t *testing.T) {
	crawltest.Waiting(t, "crawls a web twice")
	w, addr := smallWeb(t)
	cfg := webConfig(t, w, addr)
	runCrawl(t, cfg)
	want := urlMultiset(readURLs(t, cfg.OutDir))
	dir := t.TempDir()
	stats := runTCP(t, w, addr, dir, 3, 1)
	compareMultisets(t, "late peer", want, urlMultiset(readURLs(t, dir)))
	var recv int64
	for _, s := range stats {
		recv += s.BatchesReceived
	}
	if recv == 0 {
		t.Error("no batches received")
	}
}

func cfg4part(t *testing.T, u string) int {
	p := testPartitioner(t, 4)
	return p.Node(u)
}

// runTCP runs n nodes of a TCP crawl in this process, node late starting
// once every other node has started (saved the crawl's topology), so
// its peers find its port closed.
func runTCP(t *testing.T, w *testweb.Web, addr, dir string, n, late int) []*Stats {
	t.Helper()
	lns, peers := crawltest.Listeners(t, n)
	if late >= 0 {
		// The late node's port refuses connections until it starts.
		lns[late].Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	stats := make([]*Stats, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		cfg := webConfig(t, w, addr)
		cfg.OutDir = dir
		cfg.Peers, cfg.NodeID, cfg.Token = peers, i, "secret"
		cfg.listener = lns[i]
		wg.Go(func() {
			if i == late {
				// Every other node is up (it saved the crawl's topology).
				crawltest.Until(ctx, func() bool {
					for j := range n {
						if _, err := os.Stat(filepath.Join(tracefile.NodeDir(dir, j), "state", "topology.json")); j != i && err != nil {
							return false
						}
					}
					return true
				})
				ln, err := net.Listen("tcp", peers[i])
				if err != nil {
					errs[i] = err
					return
				}
				cfg.listener = ln
			}
			res, err := Run(ctx, cfg)
			errs[i] = err
			if res != nil {
				stats[i] = res.Stats
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		if stats[i].StopReason != StopDone {
			t.Errorf("node %d stopped: %s", i, stats[i].StopReason)
		}
	}
	return stats
}

func compareMultisets(t *testing.T, name string, want, got []string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	var diff []string
	i, j := 0, 0
	for (i < len(want) || j < len(got)) && len(diff) < 10 {
		switch {
		case j >= len(got) || (i < len(want) && want[i] < got[j]):
			diff = append(diff, "- "+want[i])
			i++
		case i >= len(want) || got[j] < want[i]:
			diff = append(diff, "+ "+got[j])
			j++
		default:
			i++
			j++
		}
	}
	t.Errorf("%s: %d URLs logged, want %d; first differences:\n%s", name, len(got), len(want), strings.Join(diff, "\n"))
}

var _ = fmt.Sprint

func testPartitioner(t *testing.T, n int) interface{ Node(string) int } {
	p, err := partitionNew("host", n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
