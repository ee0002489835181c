package recorder

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// connSpan is what the server saw of one connection: its host and the
// sequence numbers of its first request's start and last request's end.
type connSpan struct {
	host        string
	first, last int64
	requests    int
}

// connWatch instruments a test server: ConnContext numbers connections,
// ConnState counts them opening and closing, and the handler stamps each
// request's start and end from one counter. A client that closes a
// connection and then opens another (after reading the whole response)
// makes the server stamp the old connection's last end before the new
// one's first start, so the counter orders connections causally, without
// clocks.
type connWatch struct {
	seq            atomic.Int64
	ids            atomic.Int64
	mu             sync.Mutex
	spans          map[int64]*connSpan
	opened, closed int
	limit          map[string]int // host -> requests served per connection
	pages          int            // pages per host
}

type connIDKey struct{}

func (cw *connWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Context().Value(connIDKey{}).(int64)
	host := r.Host
	if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	start := cw.seq.Add(1)
	cw.mu.Lock()
	sp := cw.spans[id]
	if sp == nil {
		sp = &connSpan{host: host, first: start}
		cw.spans[id] = sp
	}
	if sp.host != host {
		sp.host = "MIXED " + sp.host + " " + host
	}
	sp.requests++
	if k := cw.limit[host]; k > 0 && sp.requests >= k {
		w.Header().Set("Connection", "close")
	}
	cw.mu.Unlock()
	var links []string
	if r.URL.Path == "/" {
		for i := 1; i < cw.pages; i++ {
			links = append(links, fmt.Sprintf("/p%d", i))
		}
	}
	linkPage(links...)(w, r) // small: the whole answer leaves after the handler returns
	end := cw.seq.Add(1)
	cw.mu.Lock()
	sp.last = end
	cw.mu.Unlock()
}

// TestConnectionCap crawls 8 hosts (two closing connections after every
// request, two after 3, the rest never) with 8 workers and at most 3
// connections: the server must never see two connections of one host at
// once nor more than 3 in all, connections must carry several requests,
// and every connection must be closed when the crawl ends.
func TestConnectionCap(t *testing.T) {
	const hosts, pages, cap = 8, 12, 3
	cw := &connWatch{spans: map[int64]*connSpan{}, limit: map[string]int{}, pages: pages}
	var seeds []string
	for i := 0; i < hosts; i++ {
		h := fmt.Sprintf("h%d.test", i)
		seeds = append(seeds, "http://"+h+"/")
		switch {
		case i < 2:
			cw.limit[h] = 1
		case i < 4:
			cw.limit[h] = 3
		}
	}
	srv := httptest.NewUnstartedServer(cw)
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connIDKey{}, cw.ids.Add(1))
	}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		cw.mu.Lock()
		switch s {
		case http.StateNew:
			cw.opened++
		case http.StateClosed, http.StateHijacked:
			cw.closed++
		}
		cw.mu.Unlock()
	}
	srv.Start()
	t.Cleanup(srv.Close)

	for _, order := range []string{OrderBFS, OrderPerformance} {
		cw.mu.Lock()
		clear(cw.spans)
		cw.mu.Unlock()
		cfg := localConfig(t, srv.Listener.Addr().String(), seeds...)
		cfg.Workers = 8
		cfg.MaxConns = cap
		cfg.Order = order
		res := runCrawl(t, cfg)
		if res.Stats.FetchAttempts != hosts*pages {
			t.Errorf("%s: %d pages fetched, want %d", order, res.Stats.FetchAttempts, hosts*pages)
		}
		if res.Stats.PeakConns > cap || res.Stats.PeakConns < 1 {
			t.Errorf("%s: peak connections %d, cap %d", order, res.Stats.PeakConns, cap)
		}
		cw.mu.Lock()
		spans := make([]connSpan, 0, len(cw.spans))
		for _, sp := range cw.spans {
			spans = append(spans, *sp)
		}
		cw.mu.Unlock()
		type event struct {
			at    int64
			delta int
			host  string
		}
		var ev []event
		reused := 0
		for _, sp := range spans {
			if strings.HasPrefix(sp.host, "MIXED") {
				t.Errorf("%s: one connection served two hosts: %s", order, sp.host)
			}
			if k := cw.limit[sp.host]; k > 0 && sp.requests > k {
				t.Errorf("%s: %s connection served %d requests, limit %d", order, sp.host, sp.requests, k)
			}
			if sp.requests > 1 {
				reused++
			}
			ev = append(ev, event{sp.first, 1, sp.host}, event{sp.last, -1, sp.host})
		}
		sort.Slice(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
		open, peak := 0, 0
		perHost := map[string]int{}
		for _, e := range ev {
			open += e.delta
			perHost[e.host] += e.delta
			peak = max(peak, open)
			if perHost[e.host] > 1 {
				t.Errorf("%s: host %s had two connections in use at once", order, e.host)
			}
		}
		if peak > cap {
			t.Errorf("%s: %d connections in use at once, cap %d", order, peak, cap)
		}
		if reused < hosts-2 {
			t.Errorf("%s: only %d connections carried more than one request", order, reused)
		}
		// The crawler closes every connection when it stops; the server
		// notices soon after (bounded wait, no timing asserted).
		crawltest.WaitFor(t, fmt.Sprintf("%s: every connection closed after the crawl", order), 5*time.Second, func() bool {
			cw.mu.Lock()
			defer cw.mu.Unlock()
			return cw.opened == cw.closed
		})
	}
}

// TestOrdersFetchSameSet crawls a tiny test web to completion under every
// order: each must fetch the same pages, each once, and log each page's
// oracle quality.
func TestOrdersFetchSameSet(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 5, 12, 0
	wc.KeepAliveLimits = true
	web, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	srv := crawltest.ServeWeb(t, web)
	oracle := web.Quality()
	var first []string
	for _, order := range Orders() {
		cfg := localConfig(t, srv.Addr(), web.Seeds()...)
		cfg.Order = order
		cfg.MaxConns = 2
		cfg.Quality = oracle
		res := runCrawl(t, cfg)
		if res.Stats.StopReason != StopDone {
			t.Fatalf("%s: stopped %q", order, res.Stats.StopReason)
		}
		var got []string
		var q float64
		for _, p := range readPages(t, cfg.OutDir, 0) {
			if want := oracle[p.URL]; p.Quality != want {
				t.Errorf("%s: %s logged quality %v, oracle %v", order, p.URL, p.Quality, want)
			}
			if !strings.HasSuffix(p.URL, "/robots.txt") {
				got = append(got, p.URL)
				q += p.Quality
			}
		}
		sort.Strings(got)
		if c := slices.Compact(slices.Clone(got)); len(c) != len(got) {
			t.Errorf("%s: %d fetches of %d distinct URLs", order, len(got), len(c))
		}
		if len(got) < wc.Hosts*wc.PagesPerHost/2 {
			t.Fatalf("%s: only %d pages fetched", order, len(got))
		}
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Errorf("%s fetched %d pages, bfs %d, or different ones", order, len(got), len(first))
		}
		pr := res.Stats.Progress
		if pr == nil || pr.Pages != int64(len(got)) || math.Abs(pr.Quality-q) > 1e-9 {
			t.Errorf("%s: progress %+v, want %d pages and quality %v", order, pr, len(got), q)
		} else if pr.At[len(pr.At)-1].Pages != pr.Pages || pr.TimeToPages[1].Seconds < 0 {
			t.Errorf("%s: progress at the end %+v, milestones %+v", order, pr.At[len(pr.At)-1], pr.TimeToPages)
		}
	}
}
