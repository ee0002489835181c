package launch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/launch"
)

// rdv is node node's registration in a rendezvous of nodes nodes in dir.
// (The package's own tests have the same; this file is an external test
// so that it can use crawltest, which imports launch.)
func rdv(dir string, node, nodes int, crawl string) launch.Rendezvous {
	return launch.Rendezvous{Dir: dir, Node: node, Nodes: nodes, Addr: fmt.Sprintf("h%d:%d", node, 7400+node), CrawlID: crawl,
		Timeout: 5 * time.Second, Poll: 2 * time.Millisecond}
}

// Every node of a rendezvous gets the same peers, in node order, however
// late it comes; a directory left by an earlier crawl is taken over, and
// a node that comes again at its address is let in.
func TestRendezvous(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rdv") // made by the first node
	want := []string{"h0:7400", "h1:7401", "h2:7402"}
	// An earlier launch of another crawl left node 1's and node 2's files.
	os.MkdirAll(dir, 0o755)
	for i := 1; i <= 2; i++ {
		text := fmt.Sprintf(`{"crawl_id":"earlier","node":%d,"nodes":4,"addr":"x:%d"}`, i, i)
		if err := os.WriteFile(filepath.Join(dir, launch.RendezvousName(i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Node 2 comes late: once nodes 0 and 1 have registered for crawl c.
	registered := func() bool {
		for i := range 2 {
			b, err := os.ReadFile(filepath.Join(dir, launch.RendezvousName(i)))
			if err != nil || !strings.Contains(string(b), `"crawl_id":"c"`) {
				return false
			}
		}
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs := []launch.Rendezvous{rdv(dir, 0, 3, "c"), rdv(dir, 1, 3, "c"), rdv(dir, 2, 3, "c")}
	peers := make([][]string, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() {
			if i == 2 && !crawltest.Until(ctx, registered) {
				errs[i] = errors.New("nodes 0 and 1 never registered")
				return
			}
			peers[i], errs[i] = r.Join(context.Background())
		})
	}
	wg.Wait()
	for i := range rs {
		if errs[i] != nil || !slices.Equal(peers[i], want) {
			t.Errorf("node %d: %q, %v; want %q", i, peers[i], errs[i], want)
		}
	}
	// Node 1 restarted: same address, let in at once.
	p, err := rs[1].Join(context.Background())
	if err != nil || !slices.Equal(p, want) {
		t.Errorf("node 1 again: %q, %v", p, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}
