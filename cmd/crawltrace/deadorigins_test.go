package main

import (
	"fmt"
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
	ln := crawltest.Listen(t)
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
	var lastLive, lastEnd time.Time
	tries := map[string]int{}
	var rows []string // every row, for a failure's message
	crawltest.EachPageRow(t, dir, 0, func(r tracefile.PageRecord) {
		if end := time.Unix(0, r.Time+r.DurationNS); end.After(lastEnd) {
			lastEnd = end
		}
		rows = append(rows, fmt.Sprintf("%s %s status %d took %v", time.Unix(0, r.Time).Format("15:04:05.000"), r.URL, r.Status, time.Duration(r.DurationNS).Round(time.Millisecond)))
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
	// The work (the dead origins' one retry included) is over within 2R
	// of the last live fetch. Then the crawl stops on its own: closing
	// and syncing its logs and the final checkpoint took up to 4.1 s with
	// another test binary writing beside it, so that bound is looser; a
	// crawl that waited for another retry round would pass neither.
	t.Logf("the crawl's last fetch ended %v, and the crawl %v, after its last live fetch",
		lastEnd.Sub(lastLive).Round(time.Millisecond), ended.Sub(lastLive).Round(time.Millisecond))
	if d, e := lastEnd.Sub(lastLive), ended.Sub(lastLive); d > 2*retry || e > 5*retry {
		t.Errorf("the last fetch ended %v and the crawl %v after the last live fetch (at %s), want within %v and %v; rows:\n%s",
			d, e, ended.Format("15:04:05.000"), 2*retry, 5*retry, strings.Join(rows, "\n"))
	}
}

func readLog(p *proc) (string, error) {
	b, err := os.ReadFile(p.log)
	return string(b), err
}
