package recorder

// A deterministic crawl of a web answered in process (Config.Local): the
// same frontier, worker, extractor, filter and splitter code as a live
// crawl, driven by one goroutine on a virtual clock.
//
// What makes a live crawl vary from run to run, and what this driver
// does instead:
//
//   - Workers race for hosts (Frontier.Next) and pages reach the splitter
//     in whatever order they finish. Here each node's workers are slots
//     taken in a fixed order (the longest idle first); a task ends at a
//     virtual time fixed in advance, and events run in (time, sequence)
//     order, so every page, URL row, page id and worker number comes out
//     in one order.
//   - A fetch takes what the network and the machine give it, and the
//     politeness delay is a multiple of that. Here it takes
//     LocalWeb.FetchTime(u) on the virtual clock, a function of the URL,
//     and the frontier, the robots.txt dates, the page and URL rows and
//     the delays all read that clock.
//   - Batches between nodes arrive when goroutines get to them, and a
//     splitter sends its batches when its queue happens to be empty.
//     Here a splitter sends after every message (as a live one does when
//     it keeps up) and a batch is handed to its node batchTransit of
//     virtual time later.
//   - Periodic checkpoints and the splitters' flush ticks are wall-clock
//     timers. Here only the final checkpoint is taken; flushing the logs
//     to disk changes no row.
//   - Config.Duration is wall-clock time. Here it is virtual time.
//
// Maps are never iterated where their order would reach the trace (the
// frontier's and splitter's maps are looked up or sorted), and nothing
// else runs at once: the log writers' goroutines write rows in the order
// given, and the progress line only reads counters. So the rows do not
// depend on the machine, its load or GOMAXPROCS. A signal still stops the
// crawl when it comes.

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// LocalWeb is a web answered in process, crawled deterministically
// ([Config.Local]): the same configuration, seeds and web give the same
// URL and page rows in the same order, on any machine. It is read, never
// written, by the crawler; Handler must answer a request the same way
// every time (recorder/testweb's does).
type LocalWeb struct {
	// Handler answers every request, whatever its host, on the crawl's
	// goroutine (there is no timeout: it must return).
	Handler http.Handler
	// FetchTime is how long a request for u takes on the crawl's
	// virtual clock; nil means [DefaultFetchTime]. It must depend on u
	// alone.
	FetchTime func(u string) time.Duration
}

// DefaultFetchTime is the virtual duration of a request for u when
// [LocalWeb.FetchTime] is nil: 5 ms plus an exponential time of mean
// 15 ms drawn from u's xxhash64, at most 200 ms in all.
func DefaultFetchTime(u string) time.Duration {
	x := xxhash.Sum64String(u)
	unit := (float64(x>>11) + 0.5) / (1 << 53) // in (0, 1)
	d := 5*time.Millisecond + time.Duration(-math.Log(unit)*float64(15*time.Millisecond))
	return min(d, 200*time.Millisecond)
}

// batchTransit is how long a batch between two nodes of a deterministic
// crawl takes on the virtual clock.
const batchTransit = time.Millisecond

// validateLocal checks what a deterministic crawl cannot do.
func (c *Config) validateLocal() error {
	if c.Local == nil {
		return nil
	}
	switch {
	case c.Local.Handler == nil:
		return fmt.Errorf("%w: a local web needs a handler", ErrConfig)
	case len(c.Peers) > 0:
		return fmt.Errorf("%w: a crawl of the local web runs its nodes in one process (--nodes), not over --peers", ErrConfig)
	case c.PolitenessKey == PolitenessIP:
		return fmt.Errorf("%w: a crawl of the local web has no addresses to key politeness by (--politeness-key ip)", ErrConfig)
	case c.WARC:
		return fmt.Errorf("%w: a crawl of the local web is answered in process, with no HTTP exchange to keep as WARC (--warc): crawl the local web over loopback (crawltrace testweb) to archive it", ErrConfig)
	case c.Metrics != "":
		return fmt.Errorf("%w: a crawl of the local web runs on a virtual clock and serves no metrics (--metrics): crawl the local web over loopback (crawltrace testweb) to watch it", ErrConfig)
	}
	return nil
}

// virtualClock is a deterministic crawl's clock: it moves only when the
// driver sets it. Safe for concurrent use (the progress line reads it).
type virtualClock struct{ ns atomic.Int64 }

func newVirtualClock(start time.Time) *virtualClock {
	c := &virtualClock{}
	c.ns.Store(start.UnixNano())
	return c
}

// Now is the virtual time.
func (c *virtualClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

func (c *virtualClock) set(ns int64) { c.ns.Store(ns) }
func (c *virtualClock) get() int64   { return c.ns.Load() }

// clockPart saves a deterministic crawl's virtual time in every node's
// checkpoint, so that a resumed crawl goes on from it: the politeness
// times and robots.txt dates the frontier saved are on that clock. (A
// checkpoint without it, from a live crawl, leaves the clock at the
// resume's wall-clock start.)
type clockPart struct{ c *virtualClock }

func (clockPart) Name() string { return "clock" }

func (p clockPart) Save(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%d\n", p.c.get())
	return err
}

func (p clockPart) Load(r io.Reader) error {
	var ns int64
	if _, err := fmt.Fscanf(r, "%d\n", &ns); err != nil {
		return fmt.Errorf("virtual clock: %w", err)
	}
	p.c.set(ns)
	return nil
}

var _ checkpoint.Part = clockPart{}

// handlerTransport answers requests with a handler, in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	resp.Close = resp.Header.Get("Connection") == "close"
	return resp, nil
}

// Event kinds of the driver, and one event.
const (
	evDone    = iota // a worker's task ends
	evWake           // a waiting host of a node is due
	evDeliver        // a batch reaches its node
)

type simEvent struct {
	at, start int64 // virtual ns; start: when the task was taken
	seq       uint64
	kind      int
	node      int
	w         *simWorker
	task      frontier.Task
	batch     *peer.Batch
}

type eventHeap []*simEvent

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*simEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

type simWorker struct {
	node int
	loop *worker.Loop
}

// simNode is a node as the driver sees it: its idle workers, longest
// idle first, and what its last vain poll said.
type simNode struct {
	n      *node
	idle   []*simWorker
	vain   bool   // the last poll found nothing
	gen    uint64 // the frontier's gen then
	due    int64  // when its earliest waiting host is due (MaxInt64: none)
	wakeAt int64  // the wake event queued for it (0: none)
}

// sim is the driver of a deterministic crawl: the event loop, the
// transport between its nodes and the fetch of its workers.
type sim struct {
	c       *crawl
	clock   *virtualClock
	nodes   []*simNode
	byID    map[int]*simNode
	events  eventHeap
	seq     uint64
	cur     *simEvent // the task being run (its fetch ends at cur.at)
	time    func(u string) time.Duration
	agent   string
	unacked [][]*peer.Batch // per destination, in the order sent
}

func (s *sim) push(e *simEvent) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.events, e)
}

// Send implements peer.Transport: b reaches dest batchTransit later.
func (s *sim) Send(dest int, b *peer.Batch) {
	s.c.tr.Add(1)
	s.unacked[dest] = append(s.unacked[dest], b)
	s.push(&simEvent{at: s.clock.get() + int64(batchTransit), kind: evDeliver, node: dest, batch: b})
}

// Close implements peer.Transport; batches not delivered stay unacked
// for the final checkpoint.
func (s *sim) Close() error { return nil }

// Processed implements batchAcker.
func (s *sim) Processed(dest int, b *peer.Batch) {
	q := s.unacked[dest]
	if i := slices.Index(q, b); i >= 0 {
		s.unacked[dest] = slices.Delete(q, i, i+1)
	}
}

// Unprocessed implements batchAcker: by sender and sequence number.
func (s *sim) Unprocessed(dest int) []*peer.Batch {
	out := slices.Clone(s.unacked[dest])
	slices.SortStableFunc(out, func(a, b *peer.Batch) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return int(a.Seq - b.Seq)
	})
	return out
}

var (
	_ peer.Transport = (*sim)(nil)
	_ batchAcker     = (*sim)(nil)
)

// get is the workers' fetch: the handler answers at once, and the
// request takes the time its task was given on the virtual clock.
func (s *sim) get(ctx context.Context, c *http.Client, ua, u string, limit int64, buf *bytes.Buffer, page bool) fetch.Result {
	if err := ctx.Err(); err != nil {
		buf.Reset()
		return fetch.Result{Err: err}
	}
	r := fetch.Get(ctx, c, ua, u, limit, buf, page)
	s.clock.set(s.cur.at)
	r.Dur = time.Duration(s.cur.at - s.cur.start)
	return r
}

// taskTime is how long task t will hold its worker: its request's time,
// or none for a URL robots.txt excludes.
func (s *sim) taskTime(t frontier.Task) int64 {
	u := t.URL
	switch {
	case t.Hop != nil:
		u = t.Hop.URL
	case t.Robots:
		u += "/robots.txt"
	case !t.Rules.Allowed(s.agent, t.URL):
		return 0
	}
	return int64(s.time(u))
}

// poll gives tasks to the idle workers of every node, in node order,
// while their frontiers have some; a node whose last poll was vain is
// polled again only when its frontier changed or a waiting host is due.
func (s *sim) poll() {
	now := s.clock.get()
	for _, sn := range s.nodes {
		for len(sn.idle) > 0 {
			if sn.vain && now < sn.due && sn.n.front.Gen() == sn.gen {
				break
			}
			t, ok, wait, gen := sn.n.front.Poll()
			if !ok {
				sn.vain, sn.gen, sn.due = true, gen, math.MaxInt64
				if wait >= 0 {
					sn.due = now + int64(wait)
					if sn.wakeAt <= now || sn.due < sn.wakeAt {
						sn.wakeAt = sn.due
						s.push(&simEvent{at: sn.due, kind: evWake, node: sn.n.id})
					}
				}
				break
			}
			sn.vain = false
			w := sn.idle[0]
			sn.idle = sn.idle[1:]
			s.push(&simEvent{at: now + s.taskTime(t), start: now, kind: evDone, node: sn.n.id, w: w, task: t})
		}
	}
}

// do runs e, a task's end: the worker runs the task from its start, and
// its fetch takes it to e.at.
func (s *sim) do(ctx context.Context, e *simEvent) {
	s.cur = e
	s.clock.set(e.start)
	e.w.loop.Do(ctx, e.task)
	s.clock.set(e.at)
	s.cur = nil
	sn := s.byID[e.node]
	sn.idle = append(sn.idle, e.w)
}

// loop runs the crawl until it stops (c.reason), then lets the tasks
// under way end: with their fetches for a max-pages stop (the budget
// refuses them), aborted for any other.
func (s *sim) loop(ctx context.Context, start time.Time) error {
	c := s.c
	deadline := int64(math.MaxInt64)
	if c.cfg.Duration > 0 {
		deadline = start.UnixNano() + int64(c.cfg.Duration)
	}
	s.poll()
	for stopped := false; !stopped; {
		select {
		case <-c.stopCh:
			stopped = true
			continue
		default:
		}
		if ctx.Err() != nil {
			c.stop(StopCanceled)
			continue
		}
		if len(s.events) == 0 {
			if !c.tr.Idle() {
				return fmt.Errorf("deterministic crawl: nothing left to run with work outstanding")
			}
			c.stop(StopDone)
			continue
		}
		if s.events[0].at > deadline {
			s.clock.set(deadline)
			c.stop(StopDuration)
			continue
		}
		e := heap.Pop(&s.events).(*simEvent)
		s.clock.set(e.at)
		switch e.kind {
		case evDone:
			s.do(ctx, e)
		case evWake:
			if sn := s.byID[e.node]; sn.wakeAt == e.at {
				sn.wakeAt = 0
			}
		case evDeliver:
			s.byID[e.node].n.split.HandleBatch(e.batch)
			c.tr.Add(-1)
		}
		s.poll()
	}
	abort := ctx
	if c.reason != StopMaxPages {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		abort = cctx
	}
	for len(s.events) > 0 {
		e := heap.Pop(&s.events).(*simEvent)
		if e.kind != evDone {
			continue
		}
		if abort != ctx {
			e.at = min(e.at, s.clock.get()) // aborted at the stop
		}
		s.clock.set(max(e.at, s.clock.get()))
		s.do(abort, e)
	}
	return nil
}

// simSink hands a worker's pages to its node's splitter at once.
type simSink struct{ n *node }

func (k simSink) Submit(m *splitter.Msg) {
	k.n.split.Handle(m)
}

func (k simSink) Forward(u string, task uint64) {
	k.n.split.Handle(&splitter.Msg{Forward: []string{u}, Task: task})
}

// runVirtual is Run's crawl of cfg.Local once the nodes are made (and
// restored from restored's checkpoint of generation gen): the event loop
// in place of the goroutines, the final checkpoint, the manifest and the
// statistics. The statistics' Seconds and PagesPerSecond are wall-clock,
// VirtualSeconds the crawl's length on its clock.
func runVirtual(ctx context.Context, c *crawl, p *plan, nodes []*node, restored bool, gen uint64) (*Result, error) {
	cfg := c.cfg
	wallStart := time.Now()
	// The crawl's start on its clock: the wall-clock start, or where a
	// resumed crawl's checkpoint left the clock (clockPart).
	vstart := c.clock.Now()
	s := &sim{c: c, clock: c.clock, byID: map[int]*simNode{}, time: cfg.Local.FetchTime, unacked: make([][]*peer.Batch, p.total)}
	if s.time == nil {
		s.time = DefaultFetchTime
	}
	client := &http.Client{Transport: handlerTransport{cfg.Local.Handler},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	maxConns := cfg.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultConfig().MaxConns
	}
	for _, n := range nodes {
		n.split.SetTransport(s)
		n.client = client
		n.conns = frontier.NewConnSlots(maxConns)
		n.front.Configure(cfg.Quality, n.conns)
		n.started = cfg.Now()
		o := n.workerOptions()
		o.Get, o.RulesNow = s.get, s.clock.Now
		s.agent = o.Agent
		wk := worker.New(o, n.front, simSink{n}, crawlBudget{c}, &n.st)
		sn := &simNode{n: n}
		for w := 0; w < cfg.Workers; w++ {
			sn.idle = append(sn.idle, &simWorker{node: n.id, loop: wk.Loop(uint16(w))})
		}
		s.nodes = append(s.nodes, sn)
		s.byID[n.id] = sn
	}
	// Seeds, or the batches in transit at the checkpoint's cut, as Run,
	// handled at once on the simulation's one goroutine.
	c.queueStart(nodes, restored, s.Send, func(n *node, m *splitter.Msg) { n.split.Handle(m) })
	progressDone := make(chan struct{})
	go c.progress(nodes, p.start, progressDone)
	if err := s.loop(ctx, vstart); err != nil {
		c.fail(err)
	}
	close(progressDone)

	for _, n := range nodes {
		n.front.Close()
		n.front.CloseSessions()
		n.logs = n.split.Close()
	}
	defer freeNodes(nodes)
	ckpt := newCheckpointer(c, nodes, s, gen)
	if c.failed() == nil && !cfg.NoTrace {
		if err := ckpt.Final(c.reason); err != nil {
			c.fail(err)
		}
	}
	end := cfg.Now()
	wall := time.Since(wallStart)

	man := manifestOf(p.meta, nodes, time.Now())
	stats := c.collect(nodes, end.Sub(vstart), nil, false)
	stats.StopReason = c.reason
	stats.Deterministic = true
	stats.VirtualSeconds = stats.Seconds
	stats.Seconds = wall.Seconds()
	stats.PagesPerSecond = 0
	if wall > 0 {
		stats.PagesPerSecond = float64(stats.FetchAttempts) / wall.Seconds()
	}
	stats.Checkpoints = ckpt.Taken()
	stats.PeakRSSBytes = procmem.PeakRSS()
	var werr error
	if !cfg.NoTrace {
		werr = tracefile.WriteManifest(cfg.OutDir, man)
		if err := tracefile.WriteJSON(cfg.OutDir+"/"+StatsName, stats); werr == nil {
			werr = err
		}
	}
	return c.result(man, stats, werr)
}
