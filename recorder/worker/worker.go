// Package worker is the recorder's fetch-extract-submit loop: a fetch
// worker takes a task from its node's frontier, fetches the URL (or a
// robots.txt, or a robots.txt redirect hop) over the host's connection
// session, extracts the page's links, filters them, and submits the page's
// log row and its URLs to the node's host splitter.
//
// The worker sees the other stages only through the small interfaces
// declared here, where it uses them: [Frontier] (the node's scheduler),
// [Sink] (the host splitter), [Budget] (the crawl's page budget) and the
// functions of [Options] (the fail-over owner of a URL, the end of a task).
// It counts what it does in a [Stats] that its caller owns, reads and
// checkpoints.
package worker

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/extract"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// Frontier is what a worker needs of its node's frontier;
// [frontier.Frontier] satisfies it. Its methods are called from every
// worker at once.
type Frontier interface {
	// Next blocks until a host may be fetched and returns its task,
	// holding the host until it is released; false when ctx is done or
	// the frontier is closed.
	Next(ctx context.Context) (frontier.Task, bool)
	// Release gives back host h without a request made on it (requested
	// false), ready again after delay.
	Release(h *frontier.Host, requested bool, delay time.Duration)
	// ReleaseFetch gives back host h after a request that took d, ready
	// again after the politeness delay; endSession closes h's connection
	// session.
	ReleaseFetch(h *frontier.Host, d time.Duration, endSession bool)
	// Backoff gives back the host of task t after a request that took
	// d whose server asked to come back later: ready again after the
	// longer of the politeness delay and wait. With retry, t's URL is
	// queued again first on its host, its in-flight id finished.
	Backoff(t frontier.Task, d, wait time.Duration, endSession, retry bool)
	// Finish forgets the in-flight URL task id (0: none).
	Finish(id uint64)
	// RobotsDone ends the robots.txt fetch of origin, held by owner:
	// build (nil: the rules stay as they were) makes the origin's new
	// rules from its previous ones.
	RobotsDone(owner *frontier.Host, origin string, build func(prev *robots.Rules) *robots.Rules)
	// KeyFor is u's politeness key, the server whose queue it waits in.
	KeyFor(u string) string
	// AddHop queues a robots.txt redirect hop on the server of key.
	AddHop(key string, hop *frontier.Hop)
}

// HopQueue is where a robots.txt redirect hop waits for its turn: the
// frontier of the node that owns the hop's server ([frontier.Frontier]
// satisfies it). Its methods are called from every worker of every node
// at once.
type HopQueue interface {
	// KeyFor is u's politeness key, the server whose queue it waits in.
	KeyFor(u string) string
	// AddHop queues a robots.txt redirect hop on the server of key.
	AddHop(key string, hop *frontier.Hop)
}

// Sink is what a worker needs of its node's host splitter. Its methods
// are called from every worker at once.
type Sink interface {
	// Submit hands the splitter a page in the splitter's own message,
	// waiting while the URLs do not fit the splitter's queue. A worker
	// sets the page's log row (nil in all but the last message of a page
	// of many links), its id (Source, the row's ID), the worker number,
	// the URLs found on it, the in-flight Task the page finishes once
	// logged (0: none; the URL stays in flight) and Logged, called once
	// the row is logged, in log order (see Options.Archive). The Sink owns
	// the message once submitted.
	Submit(m *splitter.Msg)
	// Forward hands u, the URL of in-flight task id, to its current owner
	// node without logging it again (fail-over moved its host).
	Forward(u string, task uint64)
}

// Budget is the crawl's page budget. It is called from every worker at
// once.
type Budget interface {
	// Reserve takes one page from the budget; false when it is used up
	// (the URL is then not fetched).
	Reserve() bool
}

// SendChunk is the most URLs a worker hands the splitter in one message.
const SendChunk = 4096

// Options configure a [Worker]; the crawler builds them from its
// configuration.
type Options struct {
	// Node is the node's id: the high bits of its page ids, and the
	// owner a fail-over must name for the node to fetch a URL.
	Node int
	// UserAgent is sent with every request; Agent is the product token
	// robots.txt rules are matched against ([robots.Agent]).
	UserAgent, Agent string
	// Client is the crawl's HTTP client; each connection session clones
	// its transport when it is an [*http.Transport].
	Client *http.Client
	// Filter decides which links and redirect targets are kept.
	Filter *urlfilter.Filter
	// MaxBodyBytes bounds a page's body; MaxRedirects is the longest
	// redirect chain followed; MaxLinksPerPage (0: no limit) is how many
	// of a page's links are kept.
	MaxBodyBytes    int64
	MaxRedirects    int
	MaxLinksPerPage int
	// Quality is the quality oracle (nil: none), read for robots.txt
	// rows; a page's quality comes with its task.
	Quality map[string]float64
	// Robots dates the rules of a robots.txt fetch: their TTL and the
	// retries of a failed fetch.
	Robots robots.Policy
	// Now is the clock of the page log's times.
	Now func() time.Time
	// RulesNow is the clock robots.txt rules are dated by: the
	// frontier's, which compares the dates with its own time. Nil:
	// time.Now.
	RulesNow func() time.Time
	// Start is when the node's workers started: the origin of the fetch
	// timeline ([Detail.Timeline]).
	Start time.Time
	// Redirects is the crawl's redirect-hop counts.
	Redirects *fetch.Redirects
	// MaxRetryAfter caps the wait a 429 or 503 response's Retry-After
	// asks of its server (0: Retry-After is not heeded); RetryAfterTries
	// is how many times a URL so answered is fetched again.
	MaxRetryAfter   time.Duration
	RetryAfterTries int
	// HopQueue, when set, is the frontier of the in-process node that
	// owns u's server: a robots.txt redirect hop to u waits there, so
	// every request to one server, hops for any node's hosts included,
	// goes through one queue. Nil (or a nil result): this node's
	// frontier.
	HopQueue func(u string) HopQueue
	// Owner, when set, says which node owns u now (fail-over); ok false
	// means fail-over is off and every task is this node's.
	Owner func(u string) (node int, ok bool)
	// TaskDone, when set, is called once per URL task (not robots.txt)
	// taken from the frontier, after whatever it gave was submitted.
	TaskDone func()
	// Get, when set, makes every request in place of [fetch.Get], with
	// its arguments: a deterministic crawl answers from a web in process
	// and gives each request a duration on its virtual clock.
	Get func(ctx context.Context, c *http.Client, ua, u string, limit int64, buf *bytes.Buffer, page bool) fetch.Result
	// Archive, when set, keeps fetches (a WARC): every request that got
	// a response is captured ([fetch.Capture]) and handed to it with the
	// URL, the fetch's start and the page row's id; it returns what the
	// page's message calls once the row is logged. It may wait (its
	// queue is full) and is called from every worker at once.
	Archive func(c *fetch.Capture, u string, start time.Time, page uint64) (logged func())
}

// Worker is one node's fetch workers: [Worker.Run] is one fetch loop,
// and several run at once on one Worker, which is safe for that
// concurrent use.
type Worker struct {
	o      Options
	front  Frontier
	sink   Sink
	budget Budget
	st     *Stats
	ownGet bool // Options.Get was given (see get)
}

// New makes the workers of a node, fetching from front, submitting to
// sink under budget and counting in st.
func New(o Options, front Frontier, sink Sink, budget Budget, st *Stats) *Worker {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RulesNow == nil {
		o.RulesNow = time.Now
	}
	ownGet := o.Get != nil
	if o.Get == nil {
		o.Get = fetch.Get
	}
	return &Worker{o: o, front: front, sink: sink, budget: budget, st: st, ownGet: ownGet}
}

// sessionClient returns the HTTP client of h's connection session, made
// on first use: a transport of its own, so the session's requests share
// one persistent connection (MaxConnsPerHost 1) that closing the session
// closes. The worker holding h calls it.
func (wk *Worker) sessionClient(h *frontier.Host) *http.Client {
	client := wk.o.Client
	c := h.Client(func() *http.Client {
		base, ok := client.Transport.(*http.Transport)
		if !ok {
			return nil
		}
		tr := base.Clone()
		tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, 1
		return &http.Client{Transport: tr, Timeout: client.Timeout, CheckRedirect: client.CheckRedirect}
	})
	if c == nil {
		return client
	}
	return c
}

// observe records a request's connection facts in h's session and
// reports whether the session should end (the connection is gone or the
// fetch failed).
func observe(h *frontier.Host, r *fetch.Result) (end bool) {
	if h.Observe(&r.Conn) {
		return true
	}
	return r.Err != nil
}

func (wk *Worker) nextPageID() uint64 {
	return uint64(wk.o.Node)<<40 | wk.st.PageSeq.Add(1)
}

func (wk *Worker) taskDone() {
	if wk.o.TaskDone != nil {
		wk.o.TaskDone()
	}
}

// Run is fetch loop number w: it runs tasks until the frontier has none
// and stopCtx is done; fetchCtx aborts requests under way.
func (wk *Worker) Run(stopCtx, fetchCtx context.Context, w uint16) {
	l := wk.Loop(w)
	for {
		t, ok := wk.front.Next(stopCtx)
		if !ok {
			return
		}
		l.Do(fetchCtx, t)
	}
}

// Loop is fetch loop number w without its wait for tasks, for a driver
// that takes the tasks from the frontier itself ([frontier.Frontier.Poll]
// on a virtual clock) and hands each to [Loop.Do].
func (wk *Worker) Loop(w uint16) *Loop {
	return &Loop{wk: wk, w: w, ex: extract.NewExtractor()}
}

// Loop is one fetch loop's own state: its number, link extractor, body
// buffer and links scratch. It is not safe for concurrent use.
type Loop struct {
	wk   *Worker
	w    uint16
	ex   *extract.Extractor
	buf  bytes.Buffer
	urls []splitter.URL // scratch of fetchPage's links
}

// exactCopy is u in a slice of its own length; nil when u is empty.
func exactCopy(u []splitter.URL) []splitter.URL {
	if len(u) == 0 {
		return nil
	}
	return append(make([]splitter.URL, 0, len(u)), u...)
}

// Do runs task t, taken from the frontier, as Run does: fetches it (or
// its robots.txt, or a hop), submits what it found and releases its host;
// ctx aborts the request.
func (l *Loop) Do(ctx context.Context, t frontier.Task) {
	wk, w := l.wk, l.w
	h := t.Host
	if t.Robots || t.Hop != nil {
		wk.robotsStep(ctx, h, t.URL, t.Hop, w, &l.buf)
		return
	}
	if wk.o.Owner != nil {
		if node, ok := wk.o.Owner(t.URL); ok && node != wk.o.Node {
			// Fail-over moved the host: its owner fetches it.
			wk.front.Release(h, false, 0)
			wk.o.Redirects.Forget(t.URL)
			wk.sink.Forward(t.URL, t.ID)
			wk.taskDone()
			return
		}
	}
	if !t.Rules.Allowed(wk.o.Agent, t.URL) {
		wk.st.RobotsExcluded.Add(1)
		wk.o.Redirects.Forget(t.URL)
		wk.front.Finish(t.ID)
		wk.front.Release(h, false, 0)
		wk.taskDone()
		return
	}
	if !wk.budget.Reserve() {
		// Not fetched: the URL stays in flight, so the final
		// checkpoint queues it again for a resumed crawl.
		wk.front.Release(h, false, 0)
		wk.taskDone()
		return
	}
	if !wk.fetchPage(ctx, t, l) {
		wk.taskDone()
	}
}

func (wk *Worker) pageRecord(u string, q float64, w uint16, start time.Time, r fetch.Result, body int) *tracefile.PageRecord {
	p := &tracefile.PageRecord{ID: wk.nextPageID(), Time: start.UnixNano(), URL: u, Status: int32(r.Status),
		ContentType: r.ContentType, Bytes: int64(body), Truncated: r.Truncated, DurationNS: int64(r.Dur),
		Worker: w, Quality: q}
	if r.Err != nil {
		p.Error = r.Err.Error()
	}
	return p
}

// fetchPage fetches task t's URL and submits its page. It reports
// whether the URL was queued again (its server asked to come back later):
// its task is then not done.
func (wk *Worker) fetchPage(ctx context.Context, t frontier.Task, l *Loop) (requeued bool) {
	u, q, h := t.URL, t.Q, t.Host
	w, ex, buf := l.w, l.ex, &l.buf
	st := wk.st
	hops := wk.o.Redirects.Take(u)
	start := wk.o.Now()
	capt := wk.capture()
	r := wk.get(ctx, wk.sessionClient(h), u, wk.o.MaxBodyBytes, buf, true, capt)
	if wait, ok := wk.retryAfter(&r); ok {
		// The server asked to come back later: the host waits, and the
		// URL is tried again a bounded number of times, each try a row
		// of the page log.
		if t.Tries < wk.o.RetryAfterTries && ctx.Err() == nil {
			requeued = true
			st.RetryAfterRetries.Add(1)
			if hops > 0 {
				wk.o.Redirects.Put(u, hops)
			}
		}
		wk.front.Backoff(t, r.Dur, wait, observe(h, &r), requeued)
	} else {
		wk.front.ReleaseFetch(h, r.Dur, observe(h, &r))
	}
	end := wk.o.Now()
	p := wk.pageRecord(u, q, w, start, r, buf.Len())
	st.mu.Lock()
	st.d.Timeline = append(st.d.Timeline, Point{At: end.Sub(wk.o.Start), Q: q})
	st.mu.Unlock()
	st.FetchAttempts.Add(1)
	st.Bytes.Add(int64(buf.Len()))
	if r.Truncated {
		st.Truncated.Add(1)
	}
	if r.Err != nil {
		st.FetchErrors.Add(1)
		if errors.Is(r.Err, fetch.ErrEncoding) {
			st.EncodingErrors.Add(1)
		}
	}
	if r.Skipped {
		st.NotHTMLSkipped.Add(1)
	}
	st.page(r.Status, int64(buf.Len()))
	// The links are gathered in the loop's scratch and each message gets
	// an exact copy: appending to a new slice per page left about twice
	// its links' size in garbage.
	urls := l.urls[:0]
	defer func() {
		clear(urls)
		l.urls = urls[:0]
	}()
	if r.Err == nil && fetch.IsRedirect(r.Status) && r.Location != "" {
		if base, err := url.Parse(u); err == nil {
			if loc, err := urlnorm.Resolve(base, r.Location); err == nil {
				p.Redirect = loc
				st.Redirects.Add(1)
				if hops >= wk.o.MaxRedirects {
					st.RedirectsCut.Add(1)
				} else if ok, reason := wk.o.Filter.Allow(loc); ok {
					wk.o.Redirects.Put(loc, hops+1)
					urls = append(urls, splitter.URL{URL: loc, Kind: tracefile.URLRedirect})
				} else {
					st.filtered(reason)
				}
			} else {
				st.BadLinks.Add(1)
			}
		}
	}
	if r.Status == http.StatusOK && extract.IsHTML(r.ContentType, buf.Bytes()) {
		st.HTMLPages.Add(1)
		taken := 0
		es, _ := ex.ExtractFrom(bytes.NewReader(buf.Bytes()), u, r.ContentType, func(l extract.Link) {
			if ok, reason := wk.o.Filter.Allow(l.URL); ok {
				if wk.o.MaxLinksPerPage > 0 && taken >= wk.o.MaxLinksPerPage {
					st.LinksDropped.Add(1)
					return
				}
				taken++
				urls = append(urls, splitter.URL{URL: l.URL, Tag: l.Tag, Kind: tracefile.URLLink})
				if len(urls) >= SendChunk {
					// A page of many links goes to the splitter in
					// parts, each within the queue's byte budget.
					wk.sink.Submit(&splitter.Msg{Source: p.ID, Worker: w, URLs: exactCopy(urls)})
					urls = urls[:0]
				}
			} else {
				st.filtered(reason)
			}
		})
		p.Links, p.UniqueLinks = uint32(es.Links), uint32(es.Unique)
		st.BadLinks.Add(int64(es.Skipped))
		if es.Transcoded {
			st.NonUTF8Pages.Add(1)
		}
		if es.UnknownCharset {
			st.CharsetUnknownPages.Add(1)
		}
		st.mu.Lock()
		st.d.Links = append(st.d.Links, p.Links)
		st.d.Unique = append(st.d.Unique, p.UniqueLinks)
		st.mu.Unlock()
	}
	id := t.ID
	if requeued {
		id = 0 // queued again, no longer in flight (Backoff)
	}
	if r.Err != nil && ctx.Err() != nil {
		// Aborted by the stop: the URL stays in flight, so the final
		// checkpoint queues it again for a resumed crawl.
		id = 0
	}
	wk.sink.Submit(&splitter.Msg{Page: p, Source: p.ID, Worker: w, URLs: exactCopy(urls), Task: id, Logged: wk.archive(ctx, capt, &r, u, start, p.ID)})
	return requeued
}

// capture is a new capture for a fetch when fetches are archived, else
// nil.
// get makes a request: through Options.Get when one was given (a
// deterministic crawl's web in process, which keeps no capture), else
// fetch.GetCapture, filling capt when not nil.
func (wk *Worker) get(ctx context.Context, c *http.Client, u string, limit int64, buf *bytes.Buffer, page bool, capt *fetch.Capture) fetch.Result {
	if wk.ownGet {
		return wk.o.Get(ctx, c, wk.o.UserAgent, u, limit, buf, page)
	}
	return fetch.GetCapture(ctx, c, wk.o.UserAgent, u, limit, buf, page, capt)
}

func (wk *Worker) capture() *fetch.Capture {
	if wk.o.Archive == nil {
		return nil
	}
	return new(fetch.Capture)
}

// archive hands a fetch's capture to Options.Archive when it got a
// response and was not aborted by the stop (its URL is then fetched
// again, and archived then).
func (wk *Worker) archive(ctx context.Context, c *fetch.Capture, r *fetch.Result, u string, start time.Time, page uint64) func() {
	if c == nil || r.Status == 0 || len(c.Response) == 0 || (r.Err != nil && ctx.Err() != nil) {
		return nil
	}
	return wk.o.Archive(c, u, start, page)
}

// retryAfter is the wait r's server asks for before its next request: a
// 429 or 503 with a Retry-After, capped at MaxRetryAfter; ok is false
// for any other response, or when Retry-After is not heeded
// (MaxRetryAfter 0). It counts the responses heeded. An HTTP-date is
// read against the wall clock, the server's, not Options.Now.
func (wk *Worker) retryAfter(r *fetch.Result) (wait time.Duration, ok bool) {
	if wk.o.MaxRetryAfter <= 0 || r.RetryAfter == "" || !politeness.RetryAfterStatus(r.Status) {
		return 0, false
	}
	wait, ok = politeness.RetryAfter(r.RetryAfter, time.Now())
	if !ok {
		return 0, false
	}
	wk.st.RetryAfterWaits.Add(1)
	return min(wait, wk.o.MaxRetryAfter), true
}
