package worker

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
)

// Loop.Do runs the tasks a driver takes with Poll, fetching through
// Options.Get: a page's row and its host's next turn are on the driver's
// clock, with the duration Get gave, and no request reaches the network.
func TestLoopDoWithGet(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	front := frontier.New(frontier.Options{Now: clock})
	front.Configure(nil, nil)
	front.Add("http://a.test/")
	front.Add("http://a.test/2")
	filter, err := urlfilter.New(urlfilter.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	const took = 40 * time.Millisecond
	get := func(_ context.Context, _ *http.Client, _, u string, _ int64, buf *bytes.Buffer, _ bool) fetch.Result {
		buf.Reset()
		now = now.Add(took)
		if u == "http://a.test/robots.txt" {
			return fetch.Result{Status: 404, Dur: took}
		}
		buf.WriteString(`<a href="/next">next</a>`)
		return fetch.Result{Status: 200, ContentType: "text/html", Dur: took}
	}
	var st Stats
	k := &sink{}
	b := &budget{}
	b.left.Store(10)
	wk := New(Options{UserAgent: agent, Agent: robots.Agent(agent), Client: &http.Client{}, Filter: filter, MaxBodyBytes: 1 << 20,
		Robots: robots.Policy{TTL: time.Hour}, Now: clock, RulesNow: clock, Start: now, Redirects: &fetch.Redirects{}, Get: get},
		front, k, b, &st)
	l := wk.Loop(3)
	for i := range 2 {
		task, ok, wait, _ := front.Poll()
		if !ok && wait > 0 {
			now = now.Add(wait) // the host's politeness delay
			task, ok, _, _ = front.Poll()
		}
		if !ok {
			t.Fatalf("task %d: none", i)
		}
		l.Do(context.Background(), task)
	}
	p := k.pages()["http://a.test/"]
	if p == nil {
		t.Fatal("no page row for http://a.test/")
	}
	if p.Page.DurationNS != int64(took) || p.Page.Time != now.Add(-took).UnixNano() || p.Worker != 3 || len(p.URLs) != 1 {
		t.Errorf("page row %+v with %d URLs, want %v long, started %v, worker 3, one link", *p.Page, len(p.URLs), took, now.Add(-took))
	}
	if _, ok, wait, _ := front.Poll(); ok || wait != took {
		t.Errorf("the host's next turn: ok %v, wait %v, want the delay rule's %v", ok, wait, took)
	}
}
