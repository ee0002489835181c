package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// One writer per crawl directory: while a crawl process runs, a second
// crawl, a --resume and an import into its directory are refused at once
// (exit 2, one line naming the running process's pid and host), and
// nothing of the running crawl is touched. Once the crawl is killed with
// kill -9, its lock is gone with it and --resume proceeds.
func TestCrawlDirectoryLock(t *testing.T) {
	childProcesses(t, "starts crawl processes")
	srv, seeds := resumeWeb(t)
	dir := filepath.Join(t.TempDir(), "crawl")
	logs := t.TempDir()
	first := startProc(t, filepath.Join(logs, "first.log"), crawlArgs(dir, srv.Addr(), seeds, "--checkpoint-every", "200ms")...)
	pid := first.cmd.Process.Pid

	// The first process has logged rows once a checkpoint exists.
	ckpt := filepath.Join(tracefile.NodeDir(dir, 0), "state", "checkpoint", "checkpoint.json")
	crawltest.WaitFor(t, "the first crawl's first checkpoint", time.Minute, func() bool {
		_, err := os.Stat(ckpt)
		return err == nil || exited(first)
	})
	if _, err := os.Stat(ckpt); err != nil {
		t.Fatalf("the first crawl ended early (%v): make the test web larger", first.err)
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

	// kill -9: no stale lock is left to clean up. Two resumes started
	// together: one continues the crawl, the other is refused at once.
	// The one that continues is then stopped by SIGTERM: that it resumed
	// and stopped cleanly is what is asked here (TestKill9Resume follows a
	// resume to the end of the crawl).
	first.cmd.Process.Kill()
	<-first.done
	var resumes []*proc
	for i := range 2 {
		resumes = append(resumes, startProc(t, filepath.Join(logs, fmt.Sprintf("resume-%d.log", i)), "crawl", "-o", dir, "--resume"))
	}
	refused, winner := 0, 1
	select {
	case <-resumes[0].done:
	case <-resumes[1].done:
		refused, winner = 1, 0
	case <-time.After(time.Minute):
		t.Fatal("neither of two resumes started together ended within a minute")
	}
	b, _ := os.ReadFile(resumes[refused].log)
	if code := exitStatus(t, resumes[refused].err); code != 2 || !strings.Contains(string(b), fmt.Sprintf("pid %d on host %s", resumes[winner].cmd.Process.Pid, host)) || strings.Count(strings.TrimSpace(string(b)), "\n") != 0 {
		t.Fatalf("two resumes at once after kill -9: the first to end exited %d saying %q; want 2 and one line naming the other (pid %d)", code, b, resumes[winner].cmd.Process.Pid)
	}
	resumes[winner].cmd.Process.Signal(syscall.SIGTERM)
	if code := exitStatus(t, resumes[winner].wait(t, "resume", time.Minute)); code != 143 {
		t.Errorf("the resume that took the lock, stopped by SIGTERM: exit %d, want 143", code)
	}
	if st := readStatsFile(t, filepath.Join(dir, "stats.json")); st.StopReason != recorder.StopCanceled || st.Resumes != 1 {
		t.Errorf("resumed crawl: stop %q after %d resumes, want %s after 1", st.StopReason, st.Resumes, recorder.StopCanceled)
	}
}

// A crawl killed with kill -9 before its first checkpoint has segments
// and no checkpoint. Its resume says so on one line, with the rows it
// moves aside (counted here from the segments themselves), and crawls
// the web again from the seeds.
func TestKill9BeforeFirstCheckpoint(t *testing.T) {
	longOnly(t)
	childProcesses(t, "starts crawl processes")
	srv, seeds := resumeWeb(t)
	dir := filepath.Join(t.TempDir(), "crawl")
	p := startProc(t, filepath.Join(t.TempDir(), "crawl.log"), crawlArgs(dir, srv.Addr(), seeds, "--checkpoint-every", "1h")...)
	seg := filepath.Join(tracefile.NodeDir(dir, 0), tracefile.SegmentName(tracefile.PrefixURLs, 1))
	crawltest.WaitFor(t, "the crawl to log 64 KiB", time.Minute, func() bool {
		st, err := os.Stat(seg)
		return err == nil && st.Size() > 64<<10 || exited(p)
	})
	if exited(p) {
		t.Fatalf("the crawl ended before it was killed (%v)", p.err)
	}
	p.cmd.Process.Kill()
	<-p.done
	if _, err := os.Stat(filepath.Join(tracefile.NodeDir(dir, 0), "state", "checkpoint")); err == nil {
		t.Fatal("the crawl took a checkpoint before it was killed")
	}
	urls := 0
	r, err := tracefile.OpenNodeURLs(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		urls += r.Batch().Len()
	}
	r.Close()
	pages := 0 // every page row, robots.txt fetches included
	paths, _ := tracefile.ListSegments(tracefile.NodeDir(dir, 0), tracefile.PrefixPages)
	for _, path := range paths {
		s, err := tracefile.OpenSegment(path, tracefile.KindPages)
		if err != nil {
			continue // cut before its schema: no rows
		}
		for s.Next() {
			pages += int(s.Record().NumRows())
		}
		s.Close()
	}

	code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--progress", "never")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	want := fmt.Sprintf("no checkpoint found (a crawl killed before its first checkpoint has none); its %d URL rows and %d page rows were moved", urls, pages)
	if !strings.Contains(errs, want) || !strings.Contains(errs, "starts again from its seeds") {
		t.Errorf("resume stderr %q, want a line saying %q", errs, want)
	}
	st := readStatsFile(t, filepath.Join(dir, "stats.json"))
	if st.DiscardedURLs != int64(urls) || st.DiscardedPages != int64(pages) || st.StopReason != "done" {
		t.Errorf("stats: %d URL rows and %d pages discarded, stop %q; want %d, %d, done", st.DiscardedURLs, st.DiscardedPages, st.StopReason, urls, pages)
	}
}

// crawl --resume of a finished crawl says so on one line and exits 0
// at once, writing nothing: no new segment, no new stats.
func TestResumeFinishedCrawlCLI(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 3, 15, 0
	srv := crawltest.Serve(t, wc)
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

// The nodes of a crawl over --peers share the crawl directory, each
// holding its own node directory: a second process for a running node is
// refused, naming it, and so are a resume of it and an import of the
// directory, while the cluster goes on to finish.
func TestClusterNodeLock(t *testing.T) {
	longOnly(t)
	childProcesses(t, "starts crawl processes")
	web := startClusterWeb(t, 12, 30)
	c := newCluster(t, web, 2, "--min-delay", "150ms") // a few seconds
	lockFile := filepath.Join(tracefile.NodeDir(c.dir, 0), ".crawltrace-lock")
	pid := c.procs[0].cmd.Process.Pid
	crawltest.WaitFor(t, "node 0 to hold its directory", 30*time.Second, func() bool {
		b, _ := os.ReadFile(lockFile)
		return strings.Contains(string(b), fmt.Sprintf("pid %d ", pid))
	})
	host, _ := os.Hostname()
	for i, tc := range []struct {
		args []string
		want string
	}{
		{c.args(0), fmt.Sprintf("pid %d on host %s", pid, host)},
		{[]string{"crawl", "-o", c.dir, "--resume", "--token", clusterToken}, fmt.Sprintf("pid %d on host %s", pid, host)},
		{[]string{"import", "urls", web.seeds, "-o", c.dir, "--force"}, "the nodes of a TCP crawl"},
	} {
		log := filepath.Join(t.TempDir(), fmt.Sprintf("second-%d.log", i))
		code := exitStatus(t, startProc(t, log, tc.args...).wait(t, tc.args[0], 30*time.Second))
		b, _ := os.ReadFile(log)
		out := strings.TrimSpace(string(b))
		if code != 2 || strings.Count(out, "\n") != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%s while the cluster runs: exit %d, output %q; want 2 and one line naming %q", strings.Join(tc.args[:3], " "), code, out, tc.want)
		}
	}
	for i, p := range c.procs {
		if err := p.wait(t, fmt.Sprintf("node %d", i), 2*time.Minute); err != nil {
			b, _ := os.ReadFile(p.log)
			t.Fatalf("node %d: %v\n%s", i, err, tail(string(b), 2000))
		}
	}
}

// A finished crawl over --peers (issue 21, case 7): every node's final
// checkpoint records that the whole crawl was over, so crawl --resume of
// each node says so on one line and exits 0 at once, a larger --max-pages
// or --duration notwithstanding, and leaves its directory as it was: no
// epoch bump, no new segment, no rewritten configuration (every file and
// directory keeps its bytes and modification time; the lock files, which
// name the process holding the directory, are left out). Before, each
// resume bumped its epoch and added empty segments.
func TestResumeFinishedClusterCLI(t *testing.T) {
	childProcesses(t, "starts crawl processes")
	web := startClusterWeb(t, 8, 20)
	c := newCluster(t, web, 3, "--min-delay", "0")
	c.waitNodes(t, 90*time.Second)
	type entry struct {
		mode  os.FileMode
		mtime time.Time
		sum   string
	}
	list := func() map[string]entry {
		m := map[string]entry{}
		err := filepath.WalkDir(c.dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.Name() == outdir.LockName {
				return err
			}
			st, err := d.Info()
			if err != nil {
				return err
			}
			e := entry{mode: st.Mode(), mtime: st.ModTime()}
			if !d.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				e.sum = fmt.Sprintf("%x", sha256.Sum256(b))
			}
			m[p] = e
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := list()
	for i := range 3 {
		if m := readCheckpointMeta(t, c.dir, i); !m.CrawlDone || m.Stop != recorder.StopDone {
			t.Errorf("node %d: final checkpoint stop %q, crawl_done %v; want done, true", i, m.Stop, m.CrawlDone)
		}
	}
	for i, more := range [][]string{{"--resume"}, {"--resume", "--max-pages", "1000000"}, {"--resume", "--duration", "1h"}} {
		log := filepath.Join(t.TempDir(), "resume.log")
		// The node's own command line, less the seeds (a resume takes
		// them from the saved crawl).
		args := c.args(i, more...)
		if j := slices.Index(args, "--seeds"); j >= 0 {
			args = slices.Delete(args, j, j+2)
		}
		code := exitStatus(t, startProc(t, log, args...).wait(t, fmt.Sprintf("resume of node %d", i), 30*time.Second))
		b, _ := os.ReadFile(log)
		out := strings.TrimSpace(string(b))
		if code != 0 || strings.Count(out, "\n") != 0 || !strings.Contains(out, "nothing to do") || !strings.Contains(out, "finished") {
			t.Errorf("crawl %s of node %d of a finished crawl: exit %d, output %q; want 0 and one line saying it is finished", strings.Join(more, " "), i, code, out)
		}
	}
	after := list()
	for p, e := range after {
		if b, ok := before[p]; !ok {
			t.Errorf("the resumes created %s", p)
		} else if b.mode != e.mode || !b.mtime.Equal(e.mtime) || b.sum != e.sum {
			t.Errorf("the resumes changed %s", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("the resumes removed %s", p)
		}
	}
}

// checkpointMeta is the part of a node's checkpoint.json the tests read.
type checkpointMeta struct {
	Stop      string `json:"stop"`
	CrawlDone bool   `json:"crawl_done"`
}

func readCheckpointMeta(t testing.TB, dir string, node int) checkpointMeta {
	t.Helper()
	var m checkpointMeta
	b, err := os.ReadFile(filepath.Join(tracefile.NodeDir(dir, node), "state", "checkpoint", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
