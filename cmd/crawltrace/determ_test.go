package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/cmd/crawltrace/internal/demo"
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
	for _, r := range crawltest.PageRows(t, dir) {
		r.Time -= t0
		out = append(out, fmt.Sprintf("page %+v", r))
	}
	return out
}

// A deterministic crawl of the local web (crawl --local-web) logs the
// same rows with one core as with two: crawltrace run as a child process
// with GOMAXPROCS=1 and GOMAXPROCS=2.
func TestLocalWebCrawlGOMAXPROCS(t *testing.T) {
	childProcesses(t, "two 5,000-page crawls in child processes")
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

// Acceptance of the deterministic demo: two runs, and a third with
// GOMAXPROCS=1, give the same crawl logs row for row, the same SUMMARY.md
// up to its wall-clock timings (demo.DeterministicPart), the same
// condensed traces, the same replay results but for their seconds column,
// and the same output but for the wall-clock time the crawl took here.
func TestDemoDeterministic(t *testing.T) {
	childProcesses(t, "three demo runs in child processes")
	wallTime := regexp.MustCompile(`\(\d+\.\ds here\)`)
	type run struct {
		rows                  []string
		summary, results, out string
		traces                string // node 0's condensed traces, fingerprint by fingerprint
	}
	var first *run
	for i, procs := range []string{"", "", "1"} {
		dir := filepath.Join(t.TempDir(), "demo-out")
		cmd := crawltest.Command(cliChild, "demo", "--out", dir, "--hosts", "60", "--pages-per-host", "50", "--max-pages", "3000",
			"--sizes", "2^0..2^14", "--no-plots", "--progress", "never")
		if procs != "" {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+procs)
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v\n%s%s", i, err, stdout.String(), stderr.String())
		}
		sum, err := os.ReadFile(filepath.Join(dir, "SUMMARY.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(sum), demo.TimingsHeading) || !strings.Contains(string(sum), "It was deterministic") {
			t.Fatalf("run %d: SUMMARY.md does not say the crawl was deterministic or has no timings section:\n%s", i, sum)
		}
		res, err := os.ReadFile(filepath.Join(dir, "replay", "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var results []string
		for _, l := range strings.Split(string(res), "\n") {
			f := strings.Split(l, ",")
			if len(f) > 8 {
				f[8] = "" // seconds: wall-clock
			}
			results = append(results, strings.Join(f, ","))
		}
		var traces strings.Builder
		for _, sub := range []string{tracefile.SubtraceFull, tracefile.SubtraceCross} {
			fps, _, err := tracefile.ReadCondensedAll(filepath.Join(dir, "condensed", tracefile.CondensedName(0, sub)))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&traces, sub, fps)
		}
		r := &run{rows: crawlRows(t, filepath.Join(dir, "crawl")), summary: demo.DeterministicPart(string(sum)), traces: traces.String(),
			results: strings.Join(results, "\n"),
			out:     wallTime.ReplaceAllString(strings.ReplaceAll(stderr.String()+stdout.String(), dir, "DIR"), "(wall time)")}
		if first == nil {
			first = r
			continue
		}
		for what, pair := range map[string][2]string{"SUMMARY.md": {first.summary, r.summary}, "results.csv": {first.results, r.results},
			"output": {first.out, r.out}, "condensed traces": {first.traces, r.traces}} {
			if pair[0] != pair[1] && what == "condensed traces" {
				t.Errorf("run %d (GOMAXPROCS %q): node 0's condensed traces differ", i, procs)
			} else if pair[0] != pair[1] {
				t.Errorf("run %d (GOMAXPROCS %q): %s differs:\n%s\n----\n%s", i, procs, what, pair[0], pair[1])
			}
		}
		if strings.Join(first.rows, "\n") != strings.Join(r.rows, "\n") {
			t.Errorf("run %d (GOMAXPROCS %q): the crawl logs differ (%d and %d rows)", i, procs, len(first.rows), len(r.rows))
		}
	}
}
