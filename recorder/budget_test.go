package recorder

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// manyLinks serves, at /, a page of n distinct links to pages that 404.
func manyLinks(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		var b strings.Builder
		b.WriteString("<html><body>")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `<a href="/l%d">x</a>`, i)
		}
		b.WriteString("</body></html>")
		w.Write([]byte(b.String()))
	}
}

// --max-links-per-page keeps the first links of a page and counts the
// rest.
func TestMaxLinksPerPage(t *testing.T) {
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"big.test": manyLinks(1000)})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://big.test/")
	cfg.MaxLinksPerPage = 100
	res := runCrawl(t, cfg)
	rows := readURLs(t, cfg.OutDir)
	if len(rows) != 101 || res.Stats.LinksDropped != 900 {
		t.Fatalf("%d URL rows, %d dropped: want 101 (seed and 100 links) and 900", len(rows), res.Stats.LinksDropped)
	}
	if rows[100].URL != "http://big.test/l99" {
		t.Errorf("last link kept %s, want the 100th", rows[100].URL)
	}
}

// A page of many links reaches the splitter in parts that each wait for
// room in the queue's byte budget: the bytes queued at once never exceed
// the budget or one part.
func TestQueueByteBudget(t *testing.T) {
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"big.test": manyLinks(12000)})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://big.test/")
	cfg.QueueBytes = 64 << 10
	res := runCrawl(t, cfg)
	part := int64(worker.SendChunk) * (int64(len("http://big.test/l12000")) + 1 + splitter.URLOverhead)
	if res.Stats.URLsLogged != 12001 || res.Stats.QueuePeakBytes == 0 || res.Stats.QueuePeakBytes > max(cfg.QueueBytes, part) {
		t.Fatalf("logged %d, peak queue %d bytes: want 12001 and a peak within max(%d, one part of %d)",
			res.Stats.URLsLogged, res.Stats.QueuePeakBytes, cfg.QueueBytes, part)
	}
}
