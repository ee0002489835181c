package worker

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
)

// vweb is a web in process on a virtual clock, answering the workers'
// requests through Options.Get: each request takes took of the clock.
type vweb struct {
	t0, now time.Time
	took    time.Duration
	// answer is the response to the n-th request (from 0) of u, and its
	// body.
	answer func(u string, n int) (fetch.Result, string)
	n      map[string]int
	reqs   []vreq
}

// vreq is a request the web answered: its URL, the node whose worker
// made it, and when it started and ended (from the clock's start).
type vreq struct {
	url        string
	node       int
	start, end time.Duration
	status     int
}

func newVWeb(answer func(u string, n int) (fetch.Result, string)) *vweb {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &vweb{t0: t0, now: t0, took: 10 * time.Millisecond, answer: answer, n: map[string]int{}}
}

func (w *vweb) clock() time.Time { return w.now }

func (w *vweb) get(node int) func(context.Context, *http.Client, string, string, int64, *bytes.Buffer, bool) fetch.Result {
	return func(_ context.Context, _ *http.Client, _, u string, _ int64, buf *bytes.Buffer, _ bool) fetch.Result {
		buf.Reset()
		r, body := w.answer(u, w.n[u])
		w.n[u]++
		buf.WriteString(body)
		start := w.now.Sub(w.t0)
		w.now = w.now.Add(w.took)
		r.Dur = w.took
		w.reqs = append(w.reqs, vreq{url: u, node: node, start: start, end: start + w.took, status: r.Status})
		return r
	}
}

// requested reports whether u was requested.
func (w *vweb) requested(u string) bool {
	return len(w.of(u)) > 0
}

// of is the requests of u.
func (w *vweb) of(u string) []vreq {
	var rs []vreq
	for _, r := range w.reqs {
		if r.url == u {
			rs = append(rs, r)
		}
	}
	return rs
}

// onHost is the requests to host's URLs, in order.
func (w *vweb) onHost(host string) []vreq {
	var rs []vreq
	for _, r := range w.reqs {
		if politeness.Host(r.url) == host {
			rs = append(rs, r)
		}
	}
	return rs
}

// vnode is an in-process node on the web's clock: a real frontier, one
// fetch loop and the sink it submits to.
type vnode struct {
	f    *frontier.Frontier
	wk   *Worker
	loop *Loop
	sink *sink
	st   *Stats
}

// newVNode makes node n of the web, with o's settings over the test
// defaults (a one-hour robots.txt TTL, a budget of 1,000 pages) and the
// frontier's delay rule delay (nil: the request's time).
func newVNode(t *testing.T, w *vweb, n int, o Options, delay func(d, crawlDelay time.Duration) time.Duration, seeds ...string) *vnode {
	t.Helper()
	f := frontier.New(frontier.Options{Now: w.clock, Delay: delay})
	f.Configure(nil, nil)
	due := &vnSink{seen: map[string]bool{}}
	for _, u := range seeds {
		due.seen[u] = true
		f.Add(u)
	}
	filter, err := urlfilter.New(urlfilter.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	o.Node, o.UserAgent, o.Agent = n, agent, robots.Agent(agent)
	o.Client, o.Filter, o.MaxBodyBytes = &http.Client{}, filter, 1<<20
	if o.Robots.TTL == 0 {
		o.Robots.TTL = time.Hour
	}
	o.Now, o.RulesNow, o.Start, o.Get = w.clock, w.clock, w.now, w.get(n)
	o.Redirects = &fetch.Redirects{}
	vn := &vnode{f: f, sink: &sink{}, st: &Stats{}}
	b := &budget{}
	b.left.Store(1000)
	due.vn = vn
	vn.wk = New(o, f, due, b, vn.st)
	vn.loop = vn.wk.Loop(uint16(n))
	return vn
}

// vnSink is a node's host splitter: it records each message and queues
// the URLs found on the node's own frontier (every host is the node's),
// each once (the DUE).
type vnSink struct {
	vn   *vnode
	seen map[string]bool
}

func (s *vnSink) Submit(m *splitter.Msg) {
	s.vn.sink.Submit(m)
	for _, u := range m.URLs {
		if !s.seen[u.URL] {
			s.seen[u.URL] = true
			s.vn.f.Add(u.URL)
		}
	}
	if m.Task != 0 {
		s.vn.f.Finish(m.Task)
	}
}

func (s *vnSink) Forward(u string, task uint64) { s.vn.sink.Forward(u, task) }

// run runs the nodes' fetch loops one task at a time on the web's clock,
// which moves by the requests and to the next host due, until no node
// has anything to give; it fails the test past limit.
func (w *vweb) run(t *testing.T, limit time.Duration, nodes ...*vnode) {
	t.Helper()
	for w.now.Sub(w.t0) < limit {
		next := time.Duration(-1)
		did := false
		for _, n := range nodes {
			tk, ok, wait, _ := n.f.Poll()
			if ok {
				n.loop.Do(context.Background(), tk)
				did = true
				continue
			}
			if wait >= 0 && (next < 0 || wait < next) {
				next = wait
			}
		}
		if did {
			continue
		}
		if next < 0 {
			return
		}
		w.now = w.now.Add(next)
	}
	t.Fatalf("the crawl did not end within %v", limit)
}

// linkPage is a 200 HTML page linking to links.
func linkPage(links ...string) (fetch.Result, string) {
	var b strings.Builder
	for _, l := range links {
		b.WriteString(`<a href="` + l + `">x</a>`)
	}
	return fetch.Result{Status: 200, ContentType: "text/html"}, b.String()
}

func redirectTo(loc string) (fetch.Result, string) {
	return fetch.Result{Status: http.StatusMovedPermanently, Location: loc}, ""
}

func robotsTxt(body string) (fetch.Result, string) {
	return fetch.Result{Status: 200, ContentType: "text/plain"}, body
}

func status(code int, retryAfter string) (fetch.Result, string) {
	return fetch.Result{Status: code, RetryAfter: retryAfter}, ""
}
