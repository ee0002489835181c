package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// vhosts serves virtual hosts chosen by the Host header, so a crawl reaches
// them all through Config.Resolve "*" -> the server.
type vhosts struct {
	mu       sync.Mutex
	sites    map[string]http.HandlerFunc
	requests []string // "host/path?query" in arrival order
}

func (v *vhosts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	v.mu.Lock()
	v.requests = append(v.requests, host+r.URL.RequestURI())
	h := v.sites[host]
	v.mu.Unlock()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h(w, r)
}

func (v *vhosts) got() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.requests...)
}

func startVhosts(t *testing.T, sites map[string]http.HandlerFunc) (*vhosts, *httptest.Server) {
	t.Helper()
	v := &vhosts{sites: sites}
	srv := httptest.NewServer(v)
	t.Cleanup(srv.Close)
	return v, srv
}

// localConfig crawls everything through srv, fast.
func localConfig(t *testing.T, addr string, seeds ...string) Config {
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Seeds = seeds
	cfg.Resolve = map[string]string{"*": addr}
	cfg.AllowPrivate = true
	cfg.MinDelay = 0
	cfg.DelayFactor = 0
	cfg.Workers = 4
	cfg.Timeout = 10 * time.Second
	cfg.IdleGrace = 200 * time.Millisecond
	cfg.RobotsRetry = 10 * time.Millisecond
	// The test web asks 1 s with every 503: the retries still happen,
	// 50 ms apart (retryafter_test.go sets its own cap).
	cfg.MaxRetryAfter = 50 * time.Millisecond
	return cfg
}

// runCrawl runs the crawl cfg until it ends, for a minute at most.
func runCrawl(t *testing.T, cfg Config) *Result {
	t.Helper()
	return runUntil(t, cfg, 60*time.Second, nil)
}

// runUntil runs the crawl cfg until it ends, cond holds (polled every
// 20 ms; nil: never) or limit has passed, whichever comes first.
func runUntil(t *testing.T, cfg Config, limit time.Duration, cond func() bool) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if cond != nil {
		go func() {
			for !cond() {
				select {
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
			cancel()
		}()
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// readURLs returns every row of every node's URL log in dir.
func readURLs(t *testing.T, dir string) []tracefile.URLRecord {
	t.Helper()
	return crawltest.URLRows(t, dir)
}

// readPages returns every row of node's page log.
func readPages(t *testing.T, dir string, node int) []tracefile.PageRecord {
	t.Helper()
	return crawltest.NodePageRows(t, dir, node)
}

// urlMultiset is "kind url" lines, sorted.
func urlMultiset(rows []tracefile.URLRecord) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Kind + " " + r.URL
	}
	sort.Strings(out)
	return out
}

func linkPage(links ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		var b strings.Builder
		b.WriteString("<html><body>")
		for _, l := range links {
			b.WriteString(`<a href="` + l + `">x</a>`)
		}
		b.WriteString("</body></html>")
		w.Write([]byte(b.String()))
	}
}

func partitionNew(name string, n int) (partition.Partitioner, error) {
	return partition.New(name, n, 0)
}

// atoiSuffix is the number ending a path ("/r3" -> 3; 0 when none).
func atoiSuffix(p string) int {
	i := len(p)
	for i > 0 && p[i-1] >= '0' && p[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(p[i:])
	return n
}
