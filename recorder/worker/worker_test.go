package worker

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
)

// sink records what the workers submit and forward.
type sink struct {
	mu       sync.Mutex
	msgs     []*splitter.Msg
	forwards []string
}

func (s *sink) Submit(m *splitter.Msg) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
}

func (s *sink) Forward(u string, task uint64) {
	s.mu.Lock()
	s.forwards = append(s.forwards, u)
	s.mu.Unlock()
}

// pages is the page rows submitted, by URL.
func (s *sink) pages() map[string]*splitter.Msg {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]*splitter.Msg{}
	for _, x := range s.msgs {
		if x.Page != nil {
			m[x.Page.URL] = x
		}
	}
	return m
}

type budget struct{ left atomic.Int64 }

func (b *budget) Reserve() bool { return b.left.Add(-1) >= 0 }

const agent = "crawltrace-test/1.0"

// crawl queues seeds on a real frontier and runs one fetch loop until
// tasks URL tasks are done (or 10 s pass); it returns the sink and stats.
func crawl(t *testing.T, o Options, pages int64, tasks int, seeds ...string) (*sink, *Stats) {
	t.Helper()
	front := frontier.New(frontier.Options{})
	front.Configure(nil, nil)
	for _, u := range seeds {
		front.Add(u)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var done atomic.Int64
	o.UserAgent, o.Agent = agent, robots.Agent(agent)
	o.Client = fetch.NewClient(fetch.ClientConfig{Timeout: 5 * time.Second, Workers: 1, AllowPrivate: true})
	o.Robots = robots.Policy{TTL: time.Hour}
	if o.Filter == nil {
		f, err := urlfilter.New(urlfilter.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		o.Filter = f
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Redirects == nil {
		o.Redirects = &fetch.Redirects{}
	}
	o.Start = time.Now()
	o.TaskDone = func() {
		if done.Add(1) == int64(tasks) {
			cancel()
		}
	}
	s, st, b := &sink{}, &Stats{}, &budget{}
	b.left.Store(pages)
	New(o, front, s, b, st).Run(ctx, context.Background(), 0)
	if n := done.Load(); n != int64(tasks) {
		t.Fatalf("%d URL tasks done before the time limit, want %d", n, tasks)
	}
	return s, st
}

// site serves /robots.txt disallowing /secret, and at / a page of links.
func site(t *testing.T, robotsTxt http.HandlerFunc, pages map[string]string) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", robotsTxt)
	for p, body := range pages {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != p {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func disallowSecret(w http.ResponseWriter, r *http.Request) {
	fmt.Fprint(w, "User-agent: *\nDisallow: /secret\n")
}

// A page's links reach the sink, filtered, with its row and task; a URL
// robots.txt disallows is counted and not fetched.
func TestPageLinksReachSink(t *testing.T) {
	base := site(t, disallowSecret, map[string]string{
		"/": `<html><body><a href="/a">a</a> <img src="/i.png"> <a href="/secret/x">s</a>` +
			`<a href="/t/t/t/t/t">trap</a> <a href="/a">again</a></body></html>`,
	})
	s, st := crawl(t, Options{Node: 3}, 10, 2, base+"/", base+"/secret/y")

	pages := s.pages()
	if len(pages) != 2 || pages[base+"/robots.txt"] == nil || pages[base+"/"] == nil {
		t.Fatalf("page rows %v: want robots.txt and / only", keys(pages))
	}
	m := pages[base+"/"]
	want := []splitter.URL{{URL: base + "/a", Tag: "a", Kind: tracefile.URLLink}, {URL: base + "/i.png", Tag: "img", Kind: tracefile.URLLink},
		{URL: base + "/secret/x", Tag: "a", Kind: tracefile.URLLink}, {URL: base + "/a", Tag: "a", Kind: tracefile.URLLink}}
	if !slices.Equal(m.URLs, want) {
		t.Errorf("links %v, want %v", m.URLs, want)
	}
	p := m.Page
	if p.Status != 200 || p.Links != 5 || p.UniqueLinks != 4 || m.Task == 0 || m.Source != p.ID || p.ID>>40 != 3 {
		t.Errorf("row %+v, task %d: want status 200, 5 links (4 distinct), a task, an id of node 3", p, m.Task)
	}
	if r := pages[base+"/robots.txt"].Page; r.Status != 200 || r.ID>>40 != 3 || r.ID == p.ID {
		t.Errorf("robots.txt row %+v", r)
	}
	if got := [...]int64{st.FetchAttempts.Load(), st.RobotsFetches.Load(), st.RobotsExcluded.Load(), st.HTMLPages.Load(), st.Filtered.Load()}; got != [...]int64{1, 1, 1, 1, 1} {
		t.Errorf("attempts, robots fetches, excluded, html, filtered = %v, want 1 each", got)
	}
	if got, want := st.RobotsBytes.Load(), int64(len("User-agent: *\nDisallow: /secret\n")); got != want {
		t.Errorf("robots.txt bytes %d, want %d", got, want)
	}
	d := st.Snapshot()
	if len(d.FilterReasons) != 1 || d.ByStatus[200] != 1 || d.RobotsByStatus[200] != 1 || !slices.Equal(d.Links, []uint32{5}) ||
		!slices.Equal(d.Unique, []uint32{4}) || len(d.Timeline) != 1 {
		t.Errorf("detail %+v", d)
	}
}

// A page of more than SendChunk links reaches the sink in parts, the row
// with the last; MaxLinksPerPage keeps the first links and counts the
// rest.
func TestManyLinksInParts(t *testing.T) {
	var b strings.Builder
	n := SendChunk + 10
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<a href="/l%d">x</a>`, i)
	}
	base := site(t, disallowSecret, map[string]string{"/": "<html><body>" + b.String() + "</body></html>"})
	s, _ := crawl(t, Options{}, 10, 1, base+"/")
	var parts []*splitter.Msg
	for _, m := range s.msgs {
		if m.Page == nil || m.Page.URL == base+"/" {
			parts = append(parts, m)
		}
	}
	if len(parts) != 2 || len(parts[0].URLs) != SendChunk || parts[0].Page != nil || len(parts[1].URLs) != 10 ||
		parts[1].Page == nil || parts[0].Source != parts[1].Page.ID || parts[1].URLs[9].URL != fmt.Sprintf("%s/l%d", base, n-1) {
		t.Fatalf("%d messages for the page", len(parts))
	}

	s, st := crawl(t, Options{MaxLinksPerPage: 100}, 10, 1, base+"/")
	m := s.pages()[base+"/"]
	if len(m.URLs) != 100 || m.URLs[99].URL != base+"/l99" || st.LinksDropped.Load() != int64(n-100) {
		t.Fatalf("%d links kept, %d dropped: want the first 100 and %d", len(m.URLs), st.LinksDropped.Load(), n-100)
	}
}

// A redirect's target goes to the sink with its hop count remembered; a
// chain at MaxRedirects is cut.
func TestRedirect(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", http.NotFound)
	mux.HandleFunc("/r", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/target", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var chains fetch.Redirects
	s, _ := crawl(t, Options{MaxRedirects: 2, Redirects: &chains}, 10, 1, srv.URL+"/r")
	m := s.pages()[srv.URL+"/r"]
	want := []splitter.URL{{URL: srv.URL + "/target", Kind: tracefile.URLRedirect}}
	if m == nil || !slices.Equal(m.URLs, want) || m.Page.Redirect != srv.URL+"/target" || chains.Take(srv.URL+"/target") != 1 {
		t.Fatalf("redirect not submitted or not remembered: %+v", m)
	}
	chains.Put(srv.URL+"/r", 2)
	s, st := crawl(t, Options{MaxRedirects: 2, Redirects: &chains}, 10, 1, srv.URL+"/r")
	if m := s.pages()[srv.URL+"/r"]; m == nil || len(m.URLs) != 0 || st.RedirectsCut.Load() != 1 || st.Redirects.Load() != 1 {
		t.Fatalf("a third hop was not cut: %+v, cut %d", m, st.RedirectsCut.Load())
	}
}

// A robots.txt that redirects is followed as a hop queued on the
// frontier; the rules found apply to the origin.
func TestRobotsRedirectHop(t *testing.T) {
	base := site(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/rules.txt", http.StatusMovedPermanently)
	}, map[string]string{
		"/rules.txt": "User-agent: *\nDisallow: /secret\n",
		"/open":      "<html></html>",
	})
	s, st := crawl(t, Options{}, 10, 2, base+"/secret", base+"/open")
	pages := s.pages()
	if r := pages[base+"/robots.txt"]; r == nil || r.Page.Redirect != base+"/rules.txt" || pages[base+"/rules.txt"] == nil || pages[base+"/secret"] != nil || pages[base+"/open"] == nil {
		t.Fatalf("page rows %v", keys(pages))
	}
	if st.RobotsFetches.Load() != 2 || st.RobotsRedirects.Load() != 1 || st.RobotsExcluded.Load() != 1 || st.FetchAttempts.Load() != 1 {
		t.Fatalf("robots fetches %d, redirects %d, excluded %d, attempts %d: want 2, 1, 1, 1",
			st.RobotsFetches.Load(), st.RobotsRedirects.Load(), st.RobotsExcluded.Load(), st.FetchAttempts.Load())
	}
}

// A URL past the page budget, or of a host fail-over moved, is not
// fetched; the moved one is forwarded.
func TestBudgetAndOwner(t *testing.T) {
	var hits atomic.Int64
	base := site(t, disallowSecret, map[string]string{"/": "<html></html>"})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s, st := crawl(t, Options{}, 0, 1, srv.URL+"/x")
	if len(s.pages()) != 1 || st.FetchAttempts.Load() != 0 || hits.Load() != 1 {
		t.Fatalf("over budget: %d rows, %d attempts, %d requests: want robots.txt only", len(s.pages()), st.FetchAttempts.Load(), hits.Load())
	}
	owner := func(u string) (int, bool) { return 1, strings.HasPrefix(u, base) }
	s, st = crawl(t, Options{Node: 0, Owner: owner}, 10, 2, base+"/", srv.URL+"/y")
	if !slices.Equal(s.forwards, []string{base + "/"}) || st.FetchAttempts.Load() != 1 || s.pages()[srv.URL+"/y"] == nil {
		t.Fatalf("forwarded %v, %d attempts: want %s/ forwarded and the other fetched", s.forwards, st.FetchAttempts.Load(), base)
	}
}

func keys(m map[string]*splitter.Msg) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
