package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// resumeWeb serves a finite test web on loopback, slow enough (simulated
// latency) that a crawl of it lasts several seconds.
func resumeWeb(t *testing.T) (*testweb.Server, []string) {
	t.Helper()
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 24, 60, 0
	// Response times make a crawl of it last seconds (a kill lands
	// mid-crawl) at a median of 10 ms, half the default: it is the whole
	// crawl TestKill9Resume and others wait for.
	wc.Latency, wc.LatencyMedian = true, 10*time.Millisecond
	srv := crawltest.Serve(t, wc)
	return srv, srv.Web().Seeds()
}

// retryCap caps the wait of a 429 or 503's Retry-After in the tests
// crawls: the test web asks 1 s with every 503 (and the crawler tries such
// a URL 3 more times), which made a 300-page crawl take 8 s instead of
// 0.7 s. The retries still happen, 50 ms apart; the tests of Retry-After
// itself (recorder/retryafter_test.go) set their own cap.
const retryCap = "50ms"

func crawlArgs(dir, addr string, seeds []string, extra ...string) []string {
	args := []string{"crawl", "-o", dir, "--resolve", "*:" + addr, "--allow-private", "--min-delay", "0",
		"--delay-factor", "0", "--workers", "16", "--max-retry-after", retryCap}
	return append(append(args, extra...), seeds...)
}

// traceSets reads a crawl directory's page URLs and distinct logged URLs
// over all its nodes, and checks that each node's URL rows are numbered
// 0, 1, 2, ... across segments.
func traceSets(t *testing.T, dir string) (pages, urls map[string]bool) {
	t.Helper()
	pages, urls = map[string]bool{}, map[string]bool{}
	nodes := crawlNodes(t, dir)
	for _, n := range nodes {
		nodeSets(t, dir, n, pages, urls)
	}
	return pages, urls
}

func nodeSets(t *testing.T, dir string, node int, pages, urls map[string]bool) {
	t.Helper()
	eachPage(t, dir, node, func(r tracefile.PageRecord) { pages[r.URL] = true })
	r, err := tracefile.OpenNodeURLs(dir, node)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var next uint64
	for r.Next() {
		b := r.Batch()
		for i := range b.Len() {
			if b.Seq.Value(i) != next {
				t.Fatalf("%s: URL row %d has seq %d", dir, next, b.Seq.Value(i))
			}
			next++
			urls[b.URL.Value(i)] = true
		}
	}
	for _, si := range r.Segments() {
		if !si.Clean {
			t.Errorf("%s: segment %s cut: %s", dir, si.File, si.Error)
		}
	}
}

// kill9AfterCheckpoint kills p, a crawl into dir, with SIGKILL once it
// has run for at least least and node 0 has written a checkpoint since
// this call (a resumed crawl's old checkpoint does not count), and waits
// for it to exit. The test fails if the crawl ends first (too small a
// web) or no checkpoint comes within a minute.
func kill9AfterCheckpoint(t *testing.T, p *proc, dir string, least time.Duration) {
	t.Helper()
	ckpt := filepath.Join(tracefile.NodeDir(dir, 0), "state", "checkpoint", "checkpoint.json")
	before, _ := os.Stat(ckpt)
	start := time.Now()
	crawltest.WaitFor(t, "a checkpoint of "+dir, time.Minute, func() bool {
		if exited(p) {
			t.Fatalf("the crawl into %s ended before it was killed (%v): make the test web larger", dir, p.err)
		}
		st, err := os.Stat(ckpt)
		return err == nil && (before == nil || st.ModTime().After(before.ModTime())) && time.Since(start) >= least
	})
	p.cmd.Process.Kill() // SIGKILL
	<-p.done
}

// A crawl killed with kill -9 about 2 s in and resumed to completion
// fetches the same pages and logs the same distinct URLs as a crawl run
// without interruption, and is one crawl to condense: with one node, and
// with three in one process (URLs in transit between nodes at the
// checkpoint are not lost).
func TestKill9Resume(t *testing.T) {
	childProcesses(t, "crawls a test web several times, in child processes")
	srv, seeds := resumeWeb(t)
	// The uninterrupted crawl: every page of the web is fetched and every
	// link logged whatever the number of nodes, so one serves both cases.
	// It runs beside the killed ones, which read it once they have resumed.
	whole := filepath.Join(t.TempDir(), "whole")
	done := make(chan error, 1)
	go func() {
		var out, errs strings.Builder
		if code := runWith(crawlArgs(whole, srv.Addr(), seeds, "--nodes", "2"), &out, &errs); code != 0 {
			done <- fmt.Errorf("uninterrupted crawl: exit %d\n%s\n%s", code, out.String(), errs.String())
		}
		close(done)
	}()
	wholeDone := sync.OnceValue(func() error { return <-done })
	t.Cleanup(func() { wholeDone() }) // before its directory is removed
	for _, nodes := range []string{"1", "3"} {
		t.Run("nodes="+nodes, func(t *testing.T) {
			t.Parallel()
			kill9Resume(t, srv.Addr(), seeds, nodes, whole, wholeDone)
		})
	}
}

func kill9Resume(t *testing.T, addr string, seeds []string, nodes, whole string, wholeDone func() error) {
	killed := filepath.Join(t.TempDir(), "killed")

	p := startProc(t, filepath.Join(t.TempDir(), "crawl.log"), crawlArgs(killed, addr, seeds, "--nodes", nodes, "--checkpoint-every", "300ms")...)
	kill9AfterCheckpoint(t, p, killed, 2*time.Second)
	if _, err := os.Stat(filepath.Join(killed, tracefile.ManifestName)); err == nil {
		t.Fatal("a killed crawl wrote a manifest")
	}

	// No flags but the directory: the rest comes from the saved crawl.
	code, out, errs := runCLI(t, "crawl", "-o", killed, "--resume")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}

	if err := wholeDone(); err != nil {
		t.Fatal(err)
	}
	wp, wu := traceSets(t, whole)
	kp, ku := traceSets(t, killed)
	for _, c := range []struct {
		what                   string
		uninterrupted, resumed map[string]bool
	}{{"pages", wp, kp}, {"distinct URLs", wu, ku}} {
		onlyU, onlyR := setDiff(c.uninterrupted, c.resumed), setDiff(c.resumed, c.uninterrupted)
		if len(onlyU) > 0 || len(onlyR) > 0 {
			t.Errorf("%s: uninterrupted %d, resumed %d; only uninterrupted %v; only resumed %v", c.what, len(c.uninterrupted), len(c.resumed), head(onlyU, 5), head(onlyR, 5))
		}
	}

	// One crawl: one crawl id, every segment of both runs in the manifest.
	man, err := tracefile.ReadManifest(killed)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := tracefile.ListSegments(tracefile.NodeDir(killed, 0), tracefile.PrefixURLs)
	if strconv.Itoa(len(man.NodeInfo)) != nodes || len(man.NodeInfo[0].URLSegments) != len(onDisk) || len(onDisk) < 2 {
		t.Errorf("manifest lists %+v; %d URL segments of node 0 on disk (want >= 2: both runs)", man.NodeInfo, len(onDisk))
	}
	stats := readStatsFile(t, filepath.Join(killed, "stats.json"))
	t.Logf("%d pages, %d distinct URLs; %d URL segments; stats %+v", len(kp), len(ku), len(onDisk), stats)
	if stats.CrawlID != man.CrawlID || stats.Resumes != 1 {
		t.Errorf("stats: %+v, manifest crawl id %s: want the same id and 1 resume", stats, man.CrawlID)
	}
	r, err := tracefile.OpenNodeURLs(killed, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta().CrawlID != man.CrawlID {
		t.Errorf("segment crawl id %s, manifest %s", r.Meta().CrawlID, man.CrawlID)
	}
	r.Close()

	code, out, errs = runCLI(t, "condense", killed, "-o", filepath.Join(filepath.Dir(killed), "condensed"))
	if code != 0 || strings.Contains(errs, "cut segment") {
		t.Fatalf("condense of the resumed crawl: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "inspect", killed)
	if code != 0 || !strings.Contains(out, man.CrawlID) {
		t.Fatalf("inspect of the resumed crawl: exit %d\n%s\n%s", code, out, errs)
	}

	// The finished crawl can be resumed again (nothing left to do) but
	// not overwritten.
	code, _, errs = runCLI(t, crawlArgs(killed, addr, seeds)...)
	if code != 2 || !strings.Contains(errs, "--resume") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("crawl into a crawl directory: exit %d, stderr %q: want 2 and one line pointing to --resume", code, errs)
	}
}

// crawl -o into a directory holding a crawl, even one killed before its
// first checkpoint, refuses without --resume.
func TestCrawlRefusesExistingDir(t *testing.T) {
	srv, seeds := resumeWeb(t)
	dir := t.TempDir()
	seeds = seeds[:1]
	if code, _, errs := runCLI(t, crawlArgs(dir, srv.Addr(), seeds, "--max-pages", "5")...); code != 0 {
		t.Fatalf("first crawl: exit %d: %s", code, errs)
	}
	code, _, errs := runCLI(t, crawlArgs(dir, srv.Addr(), seeds, "--max-pages", "5")...)
	if code != 2 || !strings.Contains(errs, "already holds a crawl") || !strings.Contains(errs, "--resume") {
		t.Fatalf("second crawl: exit %d, stderr %q", code, errs)
	}
	// A directory of segments without a manifest (a killed crawl).
	os.Remove(filepath.Join(dir, tracefile.ManifestName))
	if code, _, _ := runCLI(t, crawlArgs(dir, srv.Addr(), seeds)...); code != 2 {
		t.Fatalf("crawl into a killed crawl's directory: exit %d, want 2", code)
	}
	// Resuming an empty directory is refused too.
	code, _, errs = runCLI(t, "crawl", "-o", filepath.Join(dir, "nothing"), "--resume")
	if code != 2 || !strings.Contains(errs, "no crawl to resume") {
		t.Fatalf("resume of nothing: exit %d, stderr %q", code, errs)
	}
	// A crawl stopped cleanly by its budget resumes; the budget is the
	// crawl's, so 5 more pages are fetched, not 10.
	code, out, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--max-pages", "10")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s %s", code, out, errs)
	}
	st := readStatsFile(t, filepath.Join(dir, recorder.StatsName))
	if st.FetchAttempts != 10 {
		t.Errorf("resumed crawl with --max-pages 10: %d fetch attempts in all, want 10", st.FetchAttempts)
	}
}
