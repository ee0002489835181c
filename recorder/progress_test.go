package recorder

import (
	"bytes"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/progress"
)

// lineWriter collects progress output and closes first when a line
// arrives.
type lineWriter struct {
	mu    sync.Mutex
	b     bytes.Buffer
	once  sync.Once
	first chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.once.Do(func() { close(w.first) })
	return w.b.Write(p)
}

// In batch mode the crawl prints plain lines with the percentage of
// MaxPages. The server holds every page until the first line is out, so
// the test waits on an event, not on time.
func TestBatchProgress(t *testing.T) {
	w := &lineWriter{first: make(chan struct{})}
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(rw http.ResponseWriter, r *http.Request) {
		<-w.first
		linkPage("/1", "/2", "/3", "/4", "/5", "/6")(rw, r)
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.MaxPages = 5
	cfg.ProgressEvery = time.Millisecond
	cfg.Progress = &progress.Sink{W: w, Every: -1}
	res := runCrawl(t, cfg)
	if res.Stats.StopReason != StopMaxPages {
		t.Errorf("stop reason %q", res.Stats.StopReason)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	re := regexp.MustCompile(`(?m)^crawl: \d+s [0-5]/5 pages \(\d+\.\d%\), [0-9.k]+ pages/s(, ETA \d+[hms0-9]*)?; queued \d+, hosts \d+, robots-excluded \d+$`)
	if !re.Match(w.b.Bytes()) || bytes.Contains(w.b.Bytes(), []byte("\r")) {
		t.Errorf("progress output:\n%s", w.b.String())
	}
}
