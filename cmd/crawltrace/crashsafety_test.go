package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// One writer per crawl directory: while a crawl process runs, a second
// crawl, a --resume and an import into its directory are refused at once
// (exit 2, one line naming the running process's pid and host), and
// nothing of the running crawl is touched. Once the crawl is killed with
// kill -9, its lock is gone with it and --resume proceeds.
func TestCrawlDirectoryLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crawl processes")
	}
	srv, seeds := resumeWeb(t)
	dir := filepath.Join(t.TempDir(), "crawl")
	logs := t.TempDir()
	first := startProc(t, filepath.Join(logs, "first.log"), crawlArgs(dir, srv.Addr(), seeds, "--checkpoint-every", "200ms")...)
	pid := first.cmd.Process.Pid

	// The first process has logged rows once a checkpoint exists.
	ckpt := filepath.Join(tracefile.NodeDir(dir, 0), "state", "checkpoint", "checkpoint.json")
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(ckpt); err == nil {
			break
		}
		select {
		case <-first.done:
			t.Fatalf("the first crawl ended early (%v): make the test web larger", first.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the first crawl took no checkpoint within a minute")
		}
	}
	host, _ := os.Hostname()
	urlsFile := filepath.Join(t.TempDir(), "urls.txt")
	os.WriteFile(urlsFile, []byte("http://a.test/\n"), 0o644)
	for i, args := range [][]string{
		{"crawl", "-o", dir, "--resume"},
		crawlArgs(dir, srv.Addr(), seeds),
		{"import", "urls", urlsFile, "-o", dir, "--force"},
	} {
		log := filepath.Join(logs, fmt.Sprintf("second-%d.log", i))
		p := startProc(t, log, args...)
		code := exitStatus(t, p.wait(t, args[0], 30*time.Second))
		b, _ := os.ReadFile(log)
		out := strings.TrimSpace(string(b))
		if code != 2 || strings.Count(out, "\n") != 0 || !strings.Contains(out, fmt.Sprintf("pid %d on host %s", pid, host)) {
			t.Errorf("%s while a crawl runs in %s: exit %d, output %q; want 2 and one line naming pid %d on host %s", strings.Join(args, " "), dir, code, out, pid, host)
		}
	}
	select {
	case <-first.done:
		t.Fatalf("the first crawl ended while the others were refused (%v): make the test web larger", first.err)
	default:
	}
	if _, err := os.Stat(filepath.Join(tracefile.NodeDir(dir, 0), "state", "discarded")); err == nil {
		t.Errorf("a refused process moved the running crawl's segments to state/discarded/")
	}

	// kill -9: no stale lock is left to clean up.
	first.cmd.Process.Kill()
	<-first.done
	code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume")
	if code != 0 {
		t.Fatalf("resume after kill -9: exit %d: %s", code, errs)
	}
	if st := readStatsFile(t, filepath.Join(dir, "stats.json")); st.StopReason != "done" || st.Resumes != 1 {
		t.Errorf("resumed crawl: stop %q after %d resumes, want done after 1", st.StopReason, st.Resumes)
	}
}

// crawl --resume of a finished crawl says so on one line and exits 0
// at once, writing nothing: no new segment, no new stats.
func TestResumeFinishedCrawlCLI(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 3, 15, 0
	srv := serveWeb(t, wc)
	dir := filepath.Join(t.TempDir(), "crawl")
	if code, _, errs := runCLI(t, crawlArgs(dir, srv.Addr(), srv.Web().Seeds(), "--nodes", "2")...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, errs)
	}
	list := func() map[string]time.Time {
		m := map[string]time.Time{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() != outdir.LockName {
				st, _ := d.Info()
				m[p] = st.ModTime()
			}
			return nil
		})
		return m
	}
	before := list()
	code, out, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--max-pages", "1000")
	if code != 0 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "nothing to do") || !strings.Contains(errs, "finished") {
		t.Fatalf("resume of a finished crawl: exit %d, stdout %q, stderr %q; want 0 and one line saying it is finished", code, out, errs)
	}
	after := list()
	for p, mt := range after {
		if b, ok := before[p]; !ok || !b.Equal(mt) {
			t.Errorf("the resume wrote %s", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d files before the resume, %d after", len(before), len(after))
	}
}
