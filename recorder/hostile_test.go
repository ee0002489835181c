package recorder

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// TestHostileWeb crawls the hostile test web and checks, from the
// server's side and the crawl's, that the crawler stays polite and within
// its caps: one request at a time per host with the delay between them,
// robots.txt behind redirects obeyed, redirect chains, bodies, bombs and
// slow servers cut, and the heap bounded.
func TestHostileWeb(t *testing.T) {
	hc := testweb.DefaultHostileConfig()
	hc.DripEvery = 100 * time.Millisecond
	hc.HugeBytes, hc.BombBytes = 64<<20, 64<<20
	if !testing.Short() {
		hc.HugeBytes, hc.BombBytes = 1<<30, 256<<20
	}
	hw, err := testweb.NewHostile(hc)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := testweb.ServeHostile(t.Context(), "127.0.0.1:0", hw)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	cfg := localConfig(t, srv.Addr(), hw.Seeds()...)
	cfg.Workers = 8
	cfg.MinDelay = 100 * time.Millisecond
	cfg.Timeout = time.Second
	cfg.MaxRedirects = 5
	cfg.MaxBodyBytes = 1 << 20
	cfg.MaxPages = 120
	cfg.Duration = 30 * time.Second
	cfg.MaxRetryAfter = DefaultConfig().MaxRetryAfter // the busy host's Retry-After: 1 is heeded in full

	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats

	// Politeness, seen by the server: per host one request in flight and
	// at least MinDelay between request starts.
	for _, host := range hw.Hosts() {
		l := hw.Log(host)
		if l.MaxInFlight != 1 {
			t.Errorf("%s: %d requests in flight at once", host, l.MaxInFlight)
		}
		if l.Requests > 1 && l.MinGap < cfg.MinDelay {
			t.Errorf("%s: two requests %v apart, want at least %v", host, l.MinGap, cfg.MinDelay)
		}
	}
	paths := func(c string) []string { return hw.Log(c + "." + testweb.HostileDomain).Paths }
	has := func(c, p string) bool { return slices.Contains(paths(c), p) }

	// robots.txt behind 1 and 3 redirects is obeyed; 6 is unavailable.
	for _, c := range []string{"robots1", "robots3"} {
		if !has(c, "/open") || has(c, "/secret/1") {
			t.Errorf("%s: requests %v", c, paths(c))
		}
	}
	if !has("robots6", "/secret/1") || has("robots6", "/robots.txt?hop=6") {
		t.Errorf("robots6: requests %v", paths("robots6"))
	}
	// The endless redirect chain is cut after MaxRedirects hops.
	if n := len(paths("redirects")); n > cfg.MaxRedirects+2 || st.RedirectsCut < 1 {
		t.Errorf("redirects: %d requests, %d chains cut", n, st.RedirectsCut)
	}
	// Huge and non-HTML bodies: the server could write little of them.
	for _, c := range []string{"huge", "binary"} {
		if b := hw.Log(c + "." + testweb.HostileDomain).BodyBytes; b >= 32<<20 {
			t.Errorf("%s: the server wrote %d body bytes", c, b)
		}
	}
	if has("binary", "/from-pdf") || st.NotHTMLSkipped < 3 {
		t.Errorf("binary: requests %v, %d bodies skipped", paths("binary"), st.NotHTMLSkipped)
	}
	// Unknown and corrupt encodings are errors whose links are not followed.
	if has("encodings", "/from-unknown") || has("encodings", "/from-corrupt") || st.EncodingErrors != 3 {
		t.Errorf("encodings: requests %v, %d encoding errors", paths("encodings"), st.EncodingErrors)
	}
	// The bomb and the huge page are cut at MaxBodyBytes; the links found
	// before the cut are followed.
	if !has("bomb", "/after-bomb") || !has("huge", "/after") || !has("slow", "/after") {
		t.Errorf("pages after the bomb, the huge page or the slow server not fetched")
	}
	var slow int
	for _, p := range readPages(t, cfg.OutDir, 0) {
		switch {
		case strings.HasSuffix(p.URL, "/bomb"), strings.HasSuffix(p.URL, "/huge"):
			if !p.Truncated || p.Bytes != cfg.MaxBodyBytes {
				t.Errorf("%s: truncated %v, %d bytes", p.URL, p.Truncated, p.Bytes)
			}
		case strings.HasSuffix(p.URL, "/drip"), strings.HasSuffix(p.URL, "/stall"):
			if p.Error != "" {
				slow++
			}
		}
	}
	if slow != 2 {
		t.Errorf("%d slow-loris fetches ended in an error, want 2", slow)
	}
	// The server that always answers 429 with Retry-After: 1: /busy is
	// tried again, at most RetryAfterTries times, and the host's next
	// request comes at least the second it asks after each answer (a
	// 20 ms margin for the clock's grain).
	busy := hw.Log("busy." + testweb.HostileDomain)
	tries := 0
	for i, p := range busy.Paths {
		if p != "/busy" {
			continue
		}
		tries++
		if i+1 < len(busy.Starts) {
			if gap := busy.Starts[i+1].Sub(busy.Starts[i]); gap < time.Second-20*time.Millisecond {
				t.Errorf("busy: a request %v after a Retry-After: 1", gap)
			}
		}
	}
	t.Logf("busy: /busy requested %d times", tries)
	// The crawl runs seconds, so /busy was tried again at least once.
	if tries < 2 || tries > 1+cfg.RetryAfterTries {
		t.Errorf("busy: /busy requested %d times, want 2 to %d", tries, 1+cfg.RetryAfterTries)
	}
	// Traps, the link bomb and the redirect chain would go on forever:
	// the page budget ends the crawl.
	if st.StopReason != StopMaxPages {
		t.Errorf("stop reason %s", st.StopReason)
	}
	if peak > 512<<20 {
		t.Errorf("heap in use peaked at %d MiB", peak>>20)
	}
	t.Logf("%d fetches in %.1fs, heap peak %d MiB, %d URLs logged", st.FetchAttempts, st.Seconds, peak>>20, st.URLsLogged)
}
