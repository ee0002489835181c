package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// TestPeerHandshakeRefuses (issue 21, case 5): nodes that do not agree on
// the crawl's topology refuse each other at the handshake, before any
// batch, with an error in both logs, and every node stops with exit
// status 2 instead of crawling on. Without the handshake, a node given 4
// peers instead of 3 fetched pages twice and never ended, and nodes
// given the list in another order completed with duplicate fetches.
func TestPeerHandshakeRefuses(t *testing.T) {
	childProcesses(t, "runs crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	for _, tc := range []struct {
		name  string
		peers func(c *cluster, i int) []string // node i's --peers
		want  string                           // in the refused node's log
	}{
		{"4 peers instead of 3", func(c *cluster, i int) []string {
			if i == 2 {
				return append(append([]string(nil), c.peers...), freePorts(t, 1)...)
			}
			return c.peers
		}, "--peers: here"},
		{"list in another order", func(c *cluster, i int) []string {
			if i == 0 {
				return c.peers
			}
			return []string{c.peers[0], c.peers[2], c.peers[1]}
		}, "--peers: here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each node stops only after telling its peers, seconds of waiting
			c := &cluster{dir: filepath.Join(t.TempDir(), "crawl"), peers: freePorts(t, 3), web: web, extra: []string{"--min-delay", "50ms"}}
			c.procs = make([]*proc, 3)
			for i := range 3 {
				args := c.args(i)
				for j := range args {
					if args[j] == "--peers" {
						args[j+1] = strings.Join(tc.peers(c, i), ",")
					}
					// Each node in a directory of its own: nodes of
					// different topologies are refused a shared one
					// before any handshake (TestTwoCrawlsOneDirectoryRefused).
					if args[j] == "-o" {
						args[j+1] = fmt.Sprintf("%s-%d", c.dir, i)
					}
				}
				c.procs[i] = startProc(t, filepath.Join(filepath.Dir(c.dir), fmt.Sprintf("node-%d.log", i)), args...)
			}
			refused := 0
			var missing []string
			for i, p := range c.procs {
				err := p.wait(t, fmt.Sprintf("node %d", i), 60*time.Second)
				b, _ := os.ReadFile(p.log)
				log := string(b)
				if code := exitStatus(t, err); code != 2 {
					t.Errorf("node %d: exit %d, want 2; log:\n%s", i, code, tail(log, 2000))
				}
				if strings.Contains(log, "peer handshake") && strings.Contains(log, tc.want) {
					refused++
				}
				if !strings.Contains(log, "peer handshake") || !strings.Contains(log, tc.want) {
					missing = append(missing, fmt.Sprintf("node %d's log:\n%s", i, tail(log, 1500)))
				}
			}
			// Every node logs the refusal (each one's handshake with a
			// node that differs fails on both sides).
			if refused != 3 {
				t.Errorf("%d of 3 logs name the handshake's refusal (%q):\n%s", refused, tc.want, strings.Join(missing, "\n"))
			}
		})
	}
}

// TestPeerEpochsMovePast (issue 21, case 6, epochs): a forged batch
// claiming epoch 999 of node 2 (with the right token and topology), and
// node 1 restored with an older epoch file, do not wedge the crawl: each
// node finds its peers' view of its epoch ahead of its own and moves
// past it, and the crawl finishes with every page fetched. Without it,
// node 0 answered the real node 2 "409 stale epoch" for ever.
func TestPeerEpochsMovePast(t *testing.T) {
	longOnly(t)
	childProcesses(t, "runs four crawls in child processes")
	web := startClusterWeb(t, 12, 30)
	want := controlPages(t, web)
	c := newCluster(t, web, 3, "--min-delay", "100ms", "--checkpoint-every", "500ms")
	crawltest.WaitFor(t, "the nodes to exchange batches", 30*time.Second, func() bool {
		s, err := c.status(1)
		_, cerr := os.Stat(filepath.Join(tracefile.NodeDir(c.dir, 1), "state", "checkpoint", "checkpoint.json"))
		return err == nil && s.Sent > 0 && s.Received > 0 && cerr == nil
	})
	var buf bytes.Buffer
	if err := peer.EncodeBatch(&buf, &peer.Batch{From: 2, Epoch: 999, Seq: 1, URLs: []string{"http://h0001.test/forged"},
		Kinds: []string{"link"}, Source: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	if code := postRaw(t, c.peers[0], "Bearer "+clusterToken, "999", buf.Bytes()); code != 200 {
		t.Fatalf("forged batch: %d", code)
	}
	// Node 1 dies and comes back from a copy of its directory taken
	// before it ever started: its epoch file says 0, so it starts as
	// epoch 1 again, an epoch its peers have seen in use.
	c.procs[1].cmd.Process.Signal(syscall.SIGKILL)
	<-c.procs[1].done
	if err := os.WriteFile(filepath.Join(tracefile.NodeDir(c.dir, 1), "state", "epoch"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.procs[1] = c.start(t, 1, "--resume")
	c.waitNodes(t, 120*time.Second)
	got := map[string]bool{}
	for i := range 3 {
		for _, u := range pagesOf(t, c.dir, i) {
			got[u] = true
		}
	}
	missing := 0
	for u := range want {
		if !got[u] {
			missing++
			if missing <= 5 {
				t.Errorf("never fetched: %s", u)
			}
		}
	}
	for _, tc := range []struct {
		node int
		min  uint64
	}{{2, 1000}, {1, 2}} {
		st := readStats(t, c.dir, tc.node)
		moved := false
		for _, e := range readEvents(t, c.dir, tc.node) {
			moved = moved || e.Event == "epoch"
		}
		if st.Epoch < tc.min || !moved || st.StopReason != recorder.StopDone {
			t.Errorf("node %d: epoch %d (want at least %d), epoch event %v, stop %s", tc.node, st.Epoch, tc.min, moved, st.StopReason)
		}
	}
}
