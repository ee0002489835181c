package monitor

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// stageCounters stand for a stage's counters embedded in the stats, as
// recorder.Stats embeds worker.Counters and splitter.Stats.
type stageCounters struct {
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
}

type testStats struct {
	stageCounters
	Name     string           `json:"name"`
	Pages    int64            `json:"pages"`
	Queued   int64            `json:"queued" metric:"gauge"`
	Rate     float64          `json:"rate"`
	Epoch    uint64           `json:"epoch,omitempty"`
	ByStatus map[string]int64 `json:"by_status" metric:"counter,status"`
	Skipped  int64            `json:"skipped" metric:"-"`
	hidden   int64
}

// TestMetricsFromStats: every number of the stats (an embedded struct's
// too, as encoding/json flattens it) is a metric named after its JSON name, a counter for int64 and a gauge otherwise unless tagged,
// a map one metric with its label; strings, untagged-away and unexported
// fields are not metrics; the values are the stats' at the scrape.
func TestMetricsFromStats(t *testing.T) {
	var pages atomic.Int64
	s, err := Start(Options{Addr: "127.0.0.1:0", Labels: map[string]string{"node": "2"}, Stats: func() any {
		return &testStats{stageCounters: stageCounters{Sent: 21, Received: 22}, Name: "x", Pages: pages.Load(), Queued: 7, Rate: 1.5, Epoch: 3,
			ByStatus: map[string]int64{"200": 5, "404": 1}, Skipped: 9, hidden: 4}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(0)
	pages.Store(11)
	body := crawltest.Get(t, "http://"+s.Addr()+"/metrics")
	for _, want := range []string{
		"# TYPE crawltrace_pages_total counter", `crawltrace_pages_total{node="2"} 11`,
		"# TYPE crawltrace_queued gauge", `crawltrace_queued{node="2"} 7`,
		"# TYPE crawltrace_rate gauge", `crawltrace_rate{node="2"} 1.5`,
		`crawltrace_epoch{node="2"} 3`,
		"# TYPE crawltrace_by_status_total counter", `crawltrace_by_status_total{node="2",status="200"} 5`, `crawltrace_by_status_total{node="2",status="404"} 1`,
		"# TYPE crawltrace_sent_total counter", `crawltrace_sent_total{node="2"} 21`, `crawltrace_received_total{node="2"} 22`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	for _, not := range []string{"crawltrace_name", "crawltrace_skipped", "crawltrace_hidden"} {
		if strings.Contains(body, not) {
			t.Errorf("/metrics has %s", not)
		}
	}
	pages.Store(12)
	if body := crawltest.Get(t, "http://"+s.Addr()+"/metrics"); !strings.Contains(body, `crawltrace_pages_total{node="2"} 12`) {
		t.Errorf("a second scrape did not take the stats again:\n%s", body)
	}
	if page := crawltest.Get(t, "http://"+s.Addr()+"/"); !strings.Contains(page, `id="pages"`) || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("status page without its page count, or with an external asset")
	}
	if js := crawltest.Get(t, "http://"+s.Addr()+"/stats.json"); !strings.Contains(js, `"pages":12`) || !strings.Contains(js, `"samples":[`) {
		t.Errorf("/stats.json: %s", js)
	}
}

// TestFinalScrape: once the crawl is over its final stats are served, and
// Close waits for a scraper that scraped during the crawl to scrape them,
// but not for one that never came.
func TestFinalScrape(t *testing.T) {
	live := &testStats{Pages: 1}
	final := &testStats{Pages: 2}
	s, err := Start(Options{Addr: "127.0.0.1:0", Stats: func() any { return live }})
	if err != nil {
		t.Fatal(err)
	}
	crawltest.Get(t, "http://"+s.Addr()+"/metrics")
	s.Final(final)
	closed := make(chan struct{})
	go func() { s.Close(time.Minute); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close did not wait for the scraper to see the final stats")
	case <-time.After(100 * time.Millisecond):
	}
	if body := crawltest.Get(t, "http://"+s.Addr()+"/metrics"); !strings.Contains(body, "crawltrace_pages_total 2") {
		t.Errorf("the final scrape: %s", body)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the final scrape")
	}

	// Never scraped: Close does not linger.
	s2, err := Start(Options{Addr: "127.0.0.1:0", Stats: func() any { return live }})
	if err != nil {
		t.Fatal(err)
	}
	s2.Final(final)
	done := make(chan struct{})
	go func() { s2.Close(time.Minute); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close lingered though nobody scraped")
	}
}
