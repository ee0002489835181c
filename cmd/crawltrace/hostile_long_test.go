//go:build long

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// The tests of this file need a large input by nature (a memory bound is
// shown only by pages that would break it) and cost more CPU than the
// rest of the package's tests: they build only with -tags long, which
// .ci/run gives them.

// hostilePage writes a 16 MiB page of short distinct links (about 800,000)
// to other such pages.
func hostilePage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	bw := bufio.NewWriterSize(w, 1<<16)
	defer bw.Flush()
	bw.WriteString("<html><body>")
	page := strings.TrimPrefix(r.URL.Path, "/")
	n := 13
	for i := 0; n < 16<<20-32; i++ {
		k, _ := fmt.Fprintf(bw, "<a href=/%s%x>", page, i)
		n += k
	}
	bw.WriteString("</body></html>")
}

// Pages of 16 MiB of short links, each linking to more such pages, keep a
// 2-connection crawl with --memory 256MiB within the budget plus the
// documented constant, recorder.MemoryAllowance.
func TestHostilePagesMemory(t *testing.T) {
	// The child reads its own peak RSS: other tests may run beside it.
	childProcesses(t, "crawls millions of links (half a minute, half a GiB)")
	ln := crawltest.Listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(hostilePage)}
	go srv.Serve(ln)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "crawl")
	const budget = 256 << 20
	cfg := recorder.DefaultConfig()
	cfg.Workers = 2
	allowance := recorder.MemoryAllowance(&cfg)
	cmd := crawltest.Command(cliChild, "crawl", "-o", dir, "--resolve", "*:"+ln.Addr().String(), "--allow-private",
		"--min-delay", "0", "--delay-factor", "0", "--workers", "2", "--max-conns", "2", "--max-pages", "6",
		"--memory", "256MiB", "--due", "disk", "http://hostile.test/a")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("crawl: %v\n%s", err, stderr.String())
	}
	// The crawler's own peak RSS, from its stats.json (VmHWM). Not the
	// child's ru_maxrss: that includes this test binary's peak (a child
	// starts with vfork semantics), which is what made this test read 743
	// and 1,020 MiB while other tests of the package had run before it.
	var st struct {
		PeakRSS int64 `json:"peak_rss_bytes"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	peak := st.PeakRSS
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("ru_maxrss %d MiB (this test binary's peak included)", ru.Maxrss>>10)
	}
	t.Logf("peak RSS %d MiB (budget %d MiB + allowance %d MiB); stats %s", peak>>20, budget>>20, allowance>>20, firstLines(string(b), "urls_logged", "queue_peak_bytes", "queue_waits", "frontier_spill_written_bytes", "due_merges"))
	if peak == 0 {
		t.Skip("the crawler could not read its peak RSS (no /proc)")
	}
	// 524-526 MiB; without --memory it is 1,465 MiB.
	if limit := budget + allowance; peak > limit {
		t.Fatalf("peak RSS %d MiB, over --memory %d MiB + %d MiB", peak>>20, budget>>20, allowance>>20)
	}
}

// firstLines picks the lines of a JSON document mentioning keys.
func firstLines(doc string, keys ...string) string {
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		for _, k := range keys {
			if strings.Contains(line, `"`+k+`"`) {
				out = append(out, strings.TrimSpace(line))
			}
		}
	}
	return strings.Join(out, " ")
}
