package recorder

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// TestMaxRedirects: an endless chain /r0 -> /r1 -> ... is cut after
// MaxRedirects redirects, counted over the redirect URLs logged.
func TestMaxRedirects(t *testing.T) {
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, "/r"+strconv.Itoa(atoiSuffix(r.URL.Path)+1), http.StatusFound)
	}})
	for _, max := range []int{0, 5} {
		cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/r0")
		cfg.MaxRedirects = max
		cfg.MaxPages = 400
		before := len(v.got())
		res := runCrawl(t, cfg)
		if got := res.Stats.FetchAttempts; got != int64(max+1) {
			t.Errorf("max %d: %d fetches, want %d", max, got, max+1)
		}
		if got := len(v.got()) - before; got != max+2 { // robots.txt included
			t.Errorf("max %d: server saw %d requests, want %d", max, got, max+2)
		}
		var logged int
		for _, u := range readURLs(t, cfg.OutDir) {
			if u.Kind == tracefile.URLRedirect {
				logged++
			}
		}
		if logged != max || res.Stats.RedirectsCut != 1 || res.Stats.StopReason != StopDone {
			t.Errorf("max %d: %d redirect URLs logged, %d cut, stop %s; want %d, 1, done", max, logged, res.Stats.RedirectsCut, res.Stats.StopReason, max)
		}
	}
}
