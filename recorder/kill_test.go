package recorder

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// TestKill9 runs a crawl in a child process (killChild, started through
// crawltest), kills it with SIGKILL mid-crawl, and reads the cut trace:
// every flushed batch is there.
func TestKill9(t *testing.T) {
	crawltest.Waiting(t, "runs a child process")
	dir := t.TempDir()
	cmd := crawltest.Command(killChildName, dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	seg := filepath.Join(tracefile.NodeDir(dir, 0), tracefile.SegmentName(tracefile.PrefixURLs, 1))
	crawltest.WaitFor(t, "the child to log 64 KiB of trace", 30*time.Second, func() bool {
		st, err := os.Stat(seg)
		return err == nil && st.Size() > 64<<10
	})
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, tracefile.ManifestName)); err == nil {
		t.Error("a killed crawl wrote a manifest")
	}
	r, err := tracefile.OpenNodeURLs(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows := 0
	for r.Next() {
		rows += r.Batch().Len()
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	segs := r.Segments()
	if rows == 0 || len(segs) == 0 || segs[len(segs)-1].Clean {
		t.Errorf("rows %d, segments %+v: want rows > 0 and a cut last segment", rows, segs)
	}
}

// killChild crawls an endless web (trap hosts) into dir until killed.
func killChild(dir string) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.TrapHosts = 20, 2
	srv, err := testweb.Serve(context.Background(), "127.0.0.1:0", wc)
	if err != nil {
		os.Exit(3)
	}
	w, _ := testweb.New(wc)
	cfg := DefaultConfig()
	cfg.OutDir = dir
	cfg.Seeds = w.Seeds()
	cfg.Resolve = map[string]string{"*": srv.Addr()}
	cfg.AllowPrivate = true
	cfg.MinDelay, cfg.DelayFactor = 0, 0
	cfg.Writer.FlushRows = 100
	Run(context.Background(), cfg)
	os.Exit(4)
}
