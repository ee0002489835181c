package main

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return ee.ExitCode()
}

// A crawl stopped by SIGINT flushes its trace (manifest and segments
// readable, condense works) and exits 130, not 0.
func TestCrawlSIGINTExits130(t *testing.T) {
	cfg := testweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 200, 1000
	web, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The web tells the test when the crawl has fetched 50 pages.
	var mu sync.Mutex
	served := 0
	enough := make(chan struct{})
	h := web.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if served++; served == 50 {
			close(enough)
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	seeds := crawltest.SeedsFile(t, web.Seeds())
	out := filepath.Join(dir, "crawl")
	cmd := crawltest.Command(cliChild, "crawl", "--seeds", seeds, "--resolve", "*:"+srv.Listener.Addr().String(),
		"--allow-private", "--min-delay", "0", "--delay-factor", "0", "--max-retry-after", retryCap, "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the crawl fetched fewer than 50 pages; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(os.Interrupt)
	code := exitStatus(t, cmd.Wait())
	if code != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"crawl: stopped: signal", "crawltrace: interrupted by SIGINT"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	m, err := tracefile.ReadManifest(out)
	if err != nil || m.URLRows() == 0 {
		t.Fatalf("manifest after SIGINT: %v, %+v", err, m)
	}
	if code, _, errs := runCLI(t, "condense", out, "-o", filepath.Join(dir, "cond"), "--progress", "never"); code != 0 {
		t.Errorf("condense of the interrupted crawl: %d %s", code, errs)
	}
}

// testweb is stopped by SIGTERM with status 143.
func TestTestwebSIGTERMExits143(t *testing.T) {
	cmd := crawltest.Command(cliChild, "testweb", "--listen", "127.0.0.1:0", "--hosts", "2", "--pages-per-host", "2")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "serving") {
		cmd.Process.Kill()
		t.Fatalf("first line %q, %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitStatus(t, cmd.Wait()); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143", code)
	}
}
