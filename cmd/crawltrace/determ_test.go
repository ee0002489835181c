package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// crawlRows is every URL and page row of the crawl in dir, one line each,
// times relative to the crawl's start (its manifest's created time).
func crawlRows(t *testing.T, dir string) []string {
	t.Helper()
	man, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := man.Created.UnixNano()
	var out []string
	for _, r := range crawltest.URLRows(t, dir) {
		r.Time -= t0
		out = append(out, fmt.Sprintf("url %+v", r))
	}
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		paths, err := tracefile.ListSegments(tracefile.NodeDir(dir, n), tracefile.PrefixPages)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			s, err := tracefile.OpenSegment(p, tracefile.KindPages)
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
				rec := s.Record()
				for i := range int(rec.NumRows()) {
					r := tracefile.PageRow(rec, i)
					r.Time -= t0
					out = append(out, fmt.Sprintf("page %+v", r))
				}
			}
			s.Close()
		}
	}
	return out
}

// A deterministic crawl of the local web (crawl --local-web) logs the
// same rows with one core as with two: crawltrace run as a child process
// with GOMAXPROCS=1 and GOMAXPROCS=2.
func TestLocalWebCrawlGOMAXPROCS(t *testing.T) {
	if testing.Short() {
		t.Skip("two 5,000-page crawls in child processes")
	}
	var first []string
	for _, procs := range []string{"1", "2"} {
		dir := filepath.Join(t.TempDir(), "crawl")
		cmd := crawltest.Command(cliChild, "crawl", "-o", dir, "--local-web", "hosts=100,pages=100,seed=3",
			"--nodes", "4", "--workers", "16", "--max-pages", "5000", "--crawl-id", "procs", "--progress", "never")
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+procs)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%s: %v\n%s", procs, err, out)
		}
		if !strings.Contains(string(out), "deterministic:") {
			t.Errorf("GOMAXPROCS=%s: the crawl does not say it is deterministic:\n%s", procs, out)
		}
		rows := crawlRows(t, dir)
		if first == nil {
			first = rows
			if len(rows) < 100000 {
				t.Fatalf("only %d rows", len(rows))
			}
			continue
		}
		for i := range min(len(first), len(rows)) {
			if first[i] != rows[i] {
				t.Fatalf("row %d differs between GOMAXPROCS=1 and 2:\n  %s\n  %s", i, first[i], rows[i])
			}
		}
		if len(first) != len(rows) {
			t.Fatalf("%d rows with GOMAXPROCS=1, %d with 2", len(first), len(rows))
		}
	}
}

// --local-web's keys are checked before anything is written.
func TestLocalWebFlagRefused(t *testing.T) {
	for _, spec := range []string{"hosts", "size=3", "hosts=-1", "pages=x"} {
		dir := filepath.Join(t.TempDir(), "crawl")
		code, _, errs := runCLI(t, "crawl", "-o", dir, "--local-web", spec)
		if code != 2 || !strings.Contains(errs, "--local-web") {
			t.Errorf("--local-web %s: exit %d, %q; want 2 naming the flag", spec, code, errs)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("--local-web %s: %s was made", spec, dir)
		}
	}
}
