package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// dirState is every file under dir with its size and modification time:
// a refused resume must leave it as it was.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		// A lock file a refused run takes and releases is not state.
		if err == nil && !fi.IsDir() && !strings.Contains(fi.Name(), "lock") {
			out[p] = fmt.Sprint(fi.ModTime(), fi.Size())
		}
		return nil
	})
	return out
}

// TestResumeRefusesTopologyChange (issue 21, case 3): a resume that would
// change who owns a host is refused with exit 2, naming the flag and the
// saved value, and writes nothing; a resume that changes only what it may
// goes on. Without the check, --nodes 1 on a 3-node crawl fetched pages
// twice and lost one, --partitioner consistent on a host-partitioned
// crawl fetched thousands twice, and --nodes 3 on a 1-node crawl
// restarted silently.
func TestResumeRefusesTopologyChange(t *testing.T) {
	srv, seeds := resumeWeb(t)
	three, one := t.TempDir(), t.TempDir()
	if code, _, errs := runCLI(t, crawlArgs(three, srv.Addr(), seeds, "--nodes", "3", "--max-pages", "30")...); code != 0 {
		t.Fatalf("3-node crawl: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, crawlArgs(one, srv.Addr(), seeds, "--max-pages", "10")...); code != 0 {
		t.Fatalf("1-node crawl: exit %d: %s", code, errs)
	}
	for _, tc := range []struct {
		dir  string
		args []string
		want string
	}{
		{three, []string{"--nodes", "1"}, "--nodes 1, saved 3"},
		{three, []string{"--partitioner", "consistent"}, "--partitioner consistent, saved host"},
		{three, []string{"--politeness-key", "ip"}, "--politeness-key ip, saved host"},
		{three, []string{"--nodes", "3", "--partitioner", "domain"}, "--partitioner domain, saved host"},
		{one, []string{"--nodes", "3"}, "--nodes 3, saved 1"},
		{one, []string{"--peers", "127.0.0.1:1,127.0.0.1:2", "--token", "x"}, "--peers"},
	} {
		before := dirState(t, tc.dir)
		args := append([]string{"crawl", "-o", tc.dir, "--resume", "--max-pages", "40", "--duration", "10s"}, tc.args...)
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "topology.json") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("resume %v: exit %d, stderr %q: want 2 and one line naming %q", tc.args, code, errs, tc.want)
		}
		after := dirState(t, tc.dir)
		for p, st := range after {
			if before[p] != st {
				t.Errorf("resume %v: %s written", tc.args, p)
			}
		}
		if len(after) != len(before) {
			t.Errorf("resume %v: %d files before, %d after", tc.args, len(before), len(after))
		}
	}
	// What a resume may change: the budget, workers, delays.
	code, _, errs := runCLI(t, "crawl", "-o", three, "--resume", "--max-pages", "60", "--workers", "2", "--min-delay", "0")
	if code != 0 {
		t.Fatalf("resume with a larger budget: exit %d: %s", code, errs)
	}
	if st := readStatsFile(t, filepath.Join(three, recorder.StatsName)); st.FetchAttempts != 60 {
		t.Errorf("resumed 3-node crawl: %d fetches, want 60", st.FetchAttempts)
	}
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(tracefile.NodeDir(three, i), "state", "topology.json")); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
}

// TestCrawlHelpListsTopology: crawl --help says what a resume may and may
// not change.
func TestCrawlHelpListsTopology(t *testing.T) {
	_, out, _ := runCLI(t, "crawl", "--help")
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "A resume may change the limits") {
		t.Errorf("crawl --help does not say what a resume may change:\n%s", out)
	}
	for _, f := range peer.TopologyFlags() {
		if !strings.Contains(flat, f) {
			t.Errorf("crawl --help does not name %s", f)
		}
	}
}
