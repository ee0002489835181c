package recorder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// crawlSets is the set of page URLs fetched and of distinct URLs logged
// over every node of a crawl directory.
func crawlSets(t *testing.T, dir string, nodes int) (pages, urls map[string]bool) {
	pages, urls = map[string]bool{}, map[string]bool{}
	for n := 0; n < nodes; n++ {
		for _, p := range readPages(t, dir, n) {
			pages[p.URL] = true
		}
	}
	for _, r := range readURLs(t, dir) {
		urls[r.URL] = true
	}
	return pages, urls
}

func sameSet(t *testing.T, what string, a, b map[string]bool) {
	t.Helper()
	var onlyA, onlyB []string
	for k := range a {
		if !b[k] {
			onlyA = append(onlyA, k)
		}
	}
	for k := range b {
		if !a[k] {
			onlyB = append(onlyB, k)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	if len(onlyA)+len(onlyB) > 0 {
		t.Errorf("%s: %d vs %d; only first %v; only second %v", what, len(a), len(b), head(onlyA), head(onlyB))
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

// An in-process crawl of three nodes, stopped mid-crawl after a few
// periodic checkpoints and resumed, fetches the same pages and logs the
// same distinct URLs as one run without a stop (with the in-memory DUE);
// the URLs in transit
// between nodes at the stop are not lost.
func TestResumeMultiNode(t *testing.T) {
	crawltest.Waiting(t, "crawls a test web twice")
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 12, 40, 0
	wc.Latency = true
	srv := crawltest.Serve(t, wc)
	mk := func() Config {
		cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
		cfg.Nodes = 3
		cfg.CheckpointEvery = 100 * time.Millisecond
		return cfg
	}
	// The uninterrupted crawl runs beside the stopped and resumed one.
	whole := mk()
	wholeDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := Run(ctx, whole)
		if err == nil && res.Stats.StopReason != StopDone {
			err = fmt.Errorf("stopped by %s", res.Stats.StopReason)
		}
		wholeDone <- err
	}()
	wholeErr := sync.OnceValue(func() error { return <-wholeDone })
	t.Cleanup(func() { wholeErr() }) // before its directory is removed

	// The stopped and resumed crawl uses the disk DUE, whose state is
	// saved and loaded too.
	cfg := mk()
	cfg.DUE, cfg.DUEBuffer, cfg.DUECache = DUEDisk, 200, 64
	cfg.Memory = 32 << 10 // server queues spill, and the queue budget is tiny
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // stop once every node has written a checkpoint
		crawltest.Until(ctx, func() bool {
			for id := range cfg.Nodes {
				if _, err := os.Stat(filepath.Join(stateDir(cfg.OutDir, id), checkpoint.DirName, checkpoint.MetaName)); err != nil {
					return false
				}
			}
			return true
		})
		cancel()
	}()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.StopReason != StopCanceled {
		t.Fatalf("first run stopped by %s: make the web larger", res.Stats.StopReason)
	}
	cfg.Resume = true
	res = runCrawl(t, cfg)
	if res.Stats.StopReason != StopDone || res.Stats.Resumes != 1 {
		t.Fatalf("resumed run: stop %s, resumes %d", res.Stats.StopReason, res.Stats.Resumes)
	}
	// Each run was a new incarnation of every node (batch ids of the
	// resumed run cannot repeat the first run's).
	for id := 0; id < 3; id++ {
		if e, err := peer.ReadEpoch(stateDir(cfg.OutDir, id)); err != nil || e != 2 {
			t.Errorf("node %d epoch after one resume: %d, %v", id, e, err)
		}
	}
	if err := wholeErr(); err != nil {
		t.Fatalf("uninterrupted crawl: %v", err)
	}
	wp, wu := crawlSets(t, whole.OutDir, 3)
	kp, ku := crawlSets(t, cfg.OutDir, 3)
	sameSet(t, "pages", wp, kp)
	sameSet(t, "distinct URLs", wu, ku)
	m, err := tracefile.ReadManifest(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if m.CrawlID != res.Stats.CrawlID || m.URLRows() != int64(len(readURLs(t, cfg.OutDir))) {
		t.Errorf("manifest %s with %d rows; stats crawl id %s", m.CrawlID, m.URLRows(), res.Stats.CrawlID)
	}
}
