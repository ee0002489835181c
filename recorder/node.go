package recorder

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/extract"
	frontierdisk "github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// robotsLimit is how much of a robots.txt is read (RFC 9309 asks parsers
// to handle at least 500 KiB).
const robotsLimit = 512 << 10

// node is one crawling process: frontier, fetch workers and host splitter.
type node struct {
	id     int
	cfg    *Config
	c      *crawl
	front  *frontier
	conns  *connSlots // this node's connection cap
	split  *splitter.Splitter
	client *http.Client
	filter *urlfilter.Filter
	agent  string
	pageID atomic.Uint64
	st     nodeStats
	wg     sync.WaitGroup
	// started is when the workers started; running counts them, and the
	// last to stop closes the frontier's connection sessions.
	started time.Time
	running atomic.Int64

	// meta is the metadata of this node's log segments.
	meta tracefile.Meta
	// parts are saved in every checkpoint (see addCheckpointPart).
	parts   []checkpointPart
	pending *pendingPart
	// resume counts restarts; discardDir receives log rows a resume cuts.
	resume     resumeCounters
	discardDir string
	// store holds the frontier's spilled queues (nil: no spilling).
	store *frontierdisk.Store
	// hops spaces robots.txt redirect hops to other servers.
}

// nodeStats are a node's worker-side counters, safe for concurrent use.
type nodeStats struct {
	attempts, robotsFetches, robotsExcluded atomic.Int64
	html, bytes, truncated, redirects       atomic.Int64
	filtered, badLinks, fetchErrors         atomic.Int64
	linksDropped                            atomic.Int64
	mu                                      sync.Mutex
	byStatus                                map[int]int64
	robotsByStatus                          map[int]int64
	filterReasons                           map[string]int64
	links, unique                           []uint32
	timeline                                []fetchPoint

	// politeness and caps (robots_fetch.go, redirect.go, fetch.go)
	robotsRedirects, robotsRefetches, robotsRetries atomic.Int64
	redirectsCut, notHTML, encodingErrors           atomic.Int64

	// page charsets (extract): HTML pages read in an encoding other than
	// UTF-8, and pages that declared only unknown charsets
	nonUTF8, charsetUnknown atomic.Int64
}

// counters names every atomic counter of s, for checkpoints: a counter
// missing here would restart from zero on resume (a test checks that
// every atomic.Int64 field is listed).
func (s *nodeStats) counters() map[string]*atomic.Int64 {
	return map[string]*atomic.Int64{
		"attempts": &s.attempts, "robots_fetches": &s.robotsFetches, "robots_excluded": &s.robotsExcluded,
		"html": &s.html, "bytes": &s.bytes, "truncated": &s.truncated, "redirects": &s.redirects,
		"filtered": &s.filtered, "bad_links": &s.badLinks, "fetch_errors": &s.fetchErrors,
		"links_dropped": &s.linksDropped, "robots_redirects": &s.robotsRedirects,
		"robots_refetches": &s.robotsRefetches, "robots_retries": &s.robotsRetries,
		"redirects_cut": &s.redirectsCut, "not_html": &s.notHTML, "encoding_errors": &s.encodingErrors,
		"non_utf8_pages": &s.nonUTF8, "charset_unknown_pages": &s.charsetUnknown,
	}
}

func (s *nodeStats) status(m *map[int]int64, code int) {
	s.mu.Lock()
	if *m == nil {
		*m = make(map[int]int64)
	}
	(*m)[code]++
	s.mu.Unlock()
}

// startWorkers starts the fetch workers. Each node has its own connection
// cap, as each crawling process of a distributed crawler has.
func (n *node) startWorkers(stopCtx, fetchCtx context.Context) {
	m := n.cfg.MaxConns
	if m <= 0 {
		m = DefaultConfig().MaxConns
	}
	n.conns = newConnSlots(m)
	n.front.configure(n.cfg.Quality, n.conns)
	n.started = n.cfg.Now()
	n.running.Store(int64(n.cfg.Workers))
	for w := 0; w < n.cfg.Workers; w++ {
		n.wg.Add(1)
		go func(w int) {
			defer n.wg.Done()
			n.worker(stopCtx, fetchCtx, uint16(w))
			if n.running.Add(-1) == 0 {
				n.front.closeSessions()
			}
		}(w)
	}
}

// sessionClient returns the HTTP client of h's connection session, made
// on first use: a transport of its own, so the session's requests share
// one persistent connection (MaxConnsPerHost 1) that closing the session
// closes. The worker holding h calls it.
func (n *node) sessionClient(h *hostState) *http.Client {
	if h.sess == nil {
		return n.client
	}
	if h.sess.client == nil {
		base, ok := n.client.Transport.(*http.Transport)
		if !ok {
			return n.client
		}
		tr := base.Clone()
		tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, 1
		h.sess.client = &http.Client{Transport: tr, Timeout: n.client.Timeout, CheckRedirect: n.client.CheckRedirect}
	}
	return h.sess.client
}

// observe records a request's connection facts in h's session and
// reports whether the session should end (the connection is gone or the
// fetch failed).
func observe(h *hostState, r *fetchResult) (end bool) {
	if h.sess != nil && h.sess.sample.observe(r) {
		return true
	}
	return r.err != nil
}

func (n *node) nextPageID() uint64 {
	return uint64(n.id)<<40 | n.pageID.Add(1)
}

// delayWith is the delay rule for a request that took d to a server
// whose robots.txt asks crawlDelay.
func (n *node) delayWith(d, crawlDelay time.Duration) time.Duration {
	wait := time.Duration(n.cfg.DelayFactor * float64(d))
	wait = max(wait, n.cfg.MinDelay, crawlDelay)
	return min(wait, max(n.cfg.MaxDelay, n.cfg.MinDelay))
}

func (n *node) worker(stopCtx, fetchCtx context.Context, w uint16) {
	ex := extract.NewExtractor()
	var buf bytes.Buffer
	for {
		t, ok := n.front.next(stopCtx)
		if !ok {
			return
		}
		h := t.host
		if t.robots || t.hop != nil {
			n.robotsStep(fetchCtx, h, t.url, t.hop, w, &buf)
			continue
		}
		if r := n.split.Owner(); r != nil && r.Node(t.url) != n.id {
			// Fail-over moved the host: its owner fetches it.
			n.front.release(h, false, 0)
			n.c.redirs.forget(t.url)
			n.split.Send(&splitter.Msg{Forward: []string{t.url}, Task: t.id})
			n.c.tr.Add(-1)
			continue
		}
		if !t.rules.allowed(n.agent, t.url) {
			n.st.robotsExcluded.Add(1)
			n.c.redirs.forget(t.url)
			n.front.finish(t.id)
			n.front.release(h, false, 0)
			n.c.tr.Add(-1)
			continue
		}
		if !n.c.reserve() {
			// Not fetched: the URL stays in flight, so the final
			// checkpoint queues it again for a resumed crawl.
			n.front.release(h, false, 0)
			n.c.tr.Add(-1)
			continue
		}
		n.fetchPage(fetchCtx, t, w, ex, &buf)
		n.c.tr.Add(-1)
	}
}

func (n *node) pageRecord(u string, q float64, w uint16, start time.Time, r fetchResult, body int) *tracefile.PageRecord {
	p := &tracefile.PageRecord{ID: n.nextPageID(), Time: start.UnixNano(), URL: u, Status: int32(r.status),
		ContentType: r.contentType, Bytes: int64(body), Truncated: r.truncated, DurationNS: int64(r.dur),
		Worker: w, Quality: q}
	if r.err != nil {
		p.Error = r.err.Error()
	}
	return p
}

func (n *node) fetchPage(ctx context.Context, t task, w uint16, ex *extract.Extractor, buf *bytes.Buffer) {
	u, q, h := t.url, t.q, t.host
	hops := n.c.redirs.take(u)
	start := n.cfg.Now()
	r := fetch(ctx, n.sessionClient(h), n.cfg.UserAgent, u, n.cfg.MaxBodyBytes, buf, true)
	n.front.releaseFetch(h, r.dur, observe(h, &r))
	end := n.cfg.Now()
	p := n.pageRecord(u, q, w, start, r, buf.Len())
	n.st.mu.Lock()
	n.st.timeline = append(n.st.timeline, fetchPoint{at: end.Sub(n.started), q: q})
	n.st.mu.Unlock()
	n.st.attempts.Add(1)
	n.st.bytes.Add(int64(buf.Len()))
	if r.truncated {
		n.st.truncated.Add(1)
	}
	if r.err != nil {
		n.st.fetchErrors.Add(1)
		if errors.Is(r.err, errEncoding) {
			n.st.encodingErrors.Add(1)
		}
	}
	if r.skipped {
		n.st.notHTML.Add(1)
	}
	n.st.status(&n.st.byStatus, r.status)
	var urls []splitter.URL
	if r.err == nil && isRedirect(r.status) && r.location != "" {
		if base, err := url.Parse(u); err == nil {
			if loc, err := urlnorm.Resolve(base, r.location); err == nil {
				p.Redirect = loc
				n.st.redirects.Add(1)
				if hops >= n.cfg.MaxRedirects {
					n.st.redirectsCut.Add(1)
				} else if ok, reason := n.filter.Allow(loc); ok {
					n.c.redirs.put(loc, hops+1)
					urls = append(urls, splitter.URL{URL: loc, Kind: tracefile.URLRedirect})
				} else {
					n.filtered(reason)
				}
			} else {
				n.st.badLinks.Add(1)
			}
		}
	}
	if r.status == http.StatusOK && extract.IsHTML(r.contentType, buf.Bytes()) {
		n.st.html.Add(1)
		{
			taken := 0
			st, _ := ex.ExtractFrom(bytes.NewReader(buf.Bytes()), u, r.contentType, func(l extract.Link) {
				if ok, reason := n.filter.Allow(l.URL); ok {
					if n.cfg.MaxLinksPerPage > 0 && taken >= n.cfg.MaxLinksPerPage {
						n.st.linksDropped.Add(1)
						return
					}
					taken++
					urls = append(urls, splitter.URL{URL: l.URL, Tag: l.Tag, Kind: tracefile.URLLink})
					if len(urls) >= sendChunk {
						// A page of many links goes to the splitter in
						// parts, each within the queue's byte budget.
						n.sendURLs(&splitter.Msg{Source: p.ID, Worker: w, URLs: urls})
						urls = nil
					}
				} else {
					n.filtered(reason)
				}
			})
			p.Links, p.UniqueLinks = uint32(st.Links), uint32(st.Unique)
			n.st.badLinks.Add(int64(st.Skipped))
			if st.Encoding != "utf-8" {
				n.st.nonUTF8.Add(1)
			}
			if st.UnknownCharset {
				n.st.charsetUnknown.Add(1)
			}
			n.st.mu.Lock()
			n.st.links = append(n.st.links, p.Links)
			n.st.unique = append(n.st.unique, p.UniqueLinks)
			n.st.mu.Unlock()
		}
	}
	id := t.id
	if r.err != nil && ctx.Err() != nil {
		// Aborted by the stop: the URL stays in flight, so the final
		// checkpoint queues it again for a resumed crawl.
		id = 0
	}
	n.sendURLs(&splitter.Msg{Page: p, Source: p.ID, Worker: w, URLs: urls, Task: id})
}

// sendChunk is the most URLs a worker hands the splitter in one message.
const sendChunk = 4096

// sendURLs sends m to the splitter once its URLs fit the queue's byte
// budget; the splitter gives the bytes back when it has logged them.
func (n *node) sendURLs(m *splitter.Msg) {
	m.Bytes = splitter.URLBytes(m.URLs)
	n.split.Budget().Acquire(m.Bytes)
	if !n.split.Send(m) {
		n.split.Budget().Release(m.Bytes)
	}
}

func (n *node) filtered(reason string) {
	n.st.filtered.Add(1)
	n.st.mu.Lock()
	if n.st.filterReasons == nil {
		n.st.filterReasons = make(map[string]int64)
	}
	n.st.filterReasons[reason]++
	n.st.mu.Unlock()
}

// summary is the mean and median of a per-page count.
type summary struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
}

func summarize(xs []uint32) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := append([]uint32(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	m := len(s) / 2
	med := float64(s[m])
	if len(s)%2 == 0 {
		med = (float64(s[m-1]) + float64(s[m])) / 2
	}
	return summary{Mean: sum / float64(len(s)), Median: med}
}
