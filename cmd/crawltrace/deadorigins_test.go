package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestDeadHTTPSOriginsCrawlEnds is the dead-origin case of
// docs/politeness.md, scaled down: live pages, fetched one after another
// for about a second, link https origins whose server fails every TLS
// handshake ("remote error: tls: internal error", no certificate for the
// name). At --robots-retry R (default retries) the crawl ends on its own
// within 2R of its last live fetch (2 minutes at the default R of 1
// minute), each dead origin's robots.txt tried twice. Before, each was
// tried 5 times and the crawl ran 15R past the first try.
func TestDeadHTTPSOriginsCrawlEnds(t *testing.T) {
	t.Parallel()
	const retry = 2 * time.Second
	deadAddr := crawltest.NoCertTLS(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// /p0 links the dead origins and /p1; /pN links /pN+1, up to /p3: the
	// live fetches end before the dead origins' retry is due.
	live := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		var n int
		fmt.Sscanf(r.URL.Path, "/p%d", &n)
		w.Header().Set("Content-Type", "text/html")
		if n == 0 {
			for i := range 4 {
				fmt.Fprintf(w, `<a href="https://dead%d.test/x">x</a>`, i)
			}
		}
		if n < 3 {
			fmt.Fprintf(w, `<a href="/p%d">next</a>`, n+1)
		}
	})}
	go live.Serve(ln)
	defer live.Close()

	dir := filepath.Join(t.TempDir(), "crawl")
	p := startProc(t, filepath.Join(t.TempDir(), "log"), "crawl", "-o", dir, "--allow-private",
		"--resolve", "*:443:"+deadAddr, "--resolve", "*:"+ln.Addr().String(),
		"--min-delay", "300ms", "--robots-retry", retry.String(), "http://live.test/p0")
	if err := p.wait(t, "crawl", 60*time.Second); err != nil {
		b, _ := readLog(p)
		t.Fatalf("crawl: %v\n%s", err, tail(b, 3000))
	}
	// When the crawl ended by its own clock (the page rows' clock), not
	// when this test saw the process exit: under load the exit and the
	// test's wake-up came 0.7 s later.
	man, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	ended := man.Finished
	var lastLive time.Time
	tries := map[string]int{}
	eachPageRow(t, dir, 0, func(r tracefile.PageRecord) {
		if strings.HasPrefix(r.URL, "https://dead") {
			tries[r.URL]++
		} else if at := time.Unix(0, r.Time); strings.Contains(r.URL, "/p") && at.After(lastLive) {
			lastLive = at
		}
	})
	if len(tries) != 4 {
		t.Fatalf("dead origins' page log rows %v, want the robots.txt of 4 origins", tries)
	}
	for u, n := range tries {
		if n != 2 {
			t.Errorf("%s: %d rows, want 2 (the fetch and its one retry)", u, n)
		}
	}
	t.Logf("the crawl ended %v after its last live fetch", ended.Sub(lastLive).Round(time.Millisecond))
	if d := ended.Sub(lastLive); d > 2*retry {
		t.Errorf("the crawl ended %v after its last live fetch, want within %v (2 x --robots-retry)", d, 2*retry)
	}
}

func readLog(p *proc) (string, error) {
	b, err := os.ReadFile(p.log)
	return string(b), err
}
