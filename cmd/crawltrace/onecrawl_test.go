package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// Issue 32, case 1: a crawl directory holds one crawl. Node 0 of crawl A
// runs in D; node 1 of crawl B (another crawl id, token and peer list)
// started into D is refused with exit 2 and one line naming both crawl
// ids, before it writes any state; so is a node of crawl A's id with
// another peer list. Before, both ran, each holding D's
// shared lock, and condense counted them as one crawl of 2 nodes.
func TestTwoCrawlsOneDirectoryRefused(t *testing.T) {
	childProcesses(t, "starts crawl processes")
	web := startClusterWeb(t, 4, 10)
	a := &cluster{dir: filepath.Join(t.TempDir(), "crawl"), peers: freePorts(t, 2), web: web, extra: []string{"--min-delay", "50ms"}}
	// Node 1 of A never starts: node 0 runs until it is killed.
	p := startProc(t, filepath.Join(t.TempDir(), "a0.log"), a.args(0)...)
	defer func() {
		p.cmd.Process.Kill()
		<-p.done
	}()
	topo := filepath.Join(tracefile.NodeDir(a.dir, 0), "state", "topology.json")
	crawltest.WaitFor(t, "node 0 of crawl A to save its topology", 30*time.Second, func() bool {
		_, err := os.Stat(topo)
		return err == nil
	})
	b := []string{"crawl", "-o", a.dir, "--node-id", "1", "--peers", strings.Join(freePorts(t, 2), ","),
		"--token", "another-token", "--resolve", "*:" + web.addr, "--allow-private", "--seeds", web.seeds,
		"--crawl-id", "crawl-B"}
	log := filepath.Join(t.TempDir(), "b1.log")
	code := exitStatus(t, startProc(t, log, b...).wait(t, "node 1 of crawl B", 30*time.Second))
	out, _ := os.ReadFile(log)
	line := strings.TrimSpace(string(out))
	if code != 2 || strings.Count(line, "\n") != 0 || !strings.Contains(line, `"cluster-test"`) || !strings.Contains(line, `"crawl-B"`) {
		t.Errorf("node 1 of crawl B: exit %d, output %q; want 2 and one line naming both crawl ids", code, line)
	}
	t.Logf("crawl B: %s", line)
	// The same crawl id with another peer list is another topology.
	b[6] = strings.Join(freePorts(t, 2), ",")
	b[len(b)-1] = "cluster-test"
	code = exitStatus(t, startProc(t, log+"2", b...).wait(t, "node 1 with other peers", 30*time.Second))
	out, _ = os.ReadFile(log + "2")
	line = strings.TrimSpace(string(out))
	if code != 2 || strings.Count(line, "\n") != 0 || !strings.Contains(line, "--peers") || !strings.Contains(line, "topology.json") {
		t.Errorf("node 1 with other peers: exit %d, output %q; want 2 and one line naming --peers and topology.json", code, line)
	}
	t.Logf("other peers: %s", line)
	state := filepath.Join(tracefile.NodeDir(a.dir, 1), "state")
	for _, f := range []string{"topology.json", "config.json", "epoch"} {
		if _, err := os.Stat(filepath.Join(state, f)); err == nil {
			t.Errorf("refused node wrote %s", f)
		}
	}
	select {
	case <-p.done:
		t.Errorf("node 0 of crawl A stopped: %v", p.err)
	default:
	}
}
