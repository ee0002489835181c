package recorder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/counters"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/monitor"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// declaredCounters are the names of every counter the stages declare.
func declaredCounters() []string {
	return append(counters.Names[worker.Counters[int64]](), counters.Names[splitter.Stats]()...)
}

// readStatsJSON is dir's stats.json as JSON numbers by name.
func readStatsJSON(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// scrapeCounters is every crawltrace_*_total sample without labels that a
// scrape of addr's /metrics gives, by metric name.
func scrapeCounters(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(crawltest.Get(t, "http://"+addr+"/metrics"), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[name] = v
	}
	return out
}

// Every counter a stage declares, with no edit anywhere else, is in
// stats.json, survives a checkpoint and resume (a crawl of two nodes
// stopped at its budget and resumed for one more page ends with every
// counter at least where the first run left it, and the first run's
// non-zero counters non-zero), and is a counter metric with stats.json's
// value.
func TestDeclaredCountersReachStatsCheckpointAndMetrics(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost = 30, 40
	cfg := localWebConfig(t, wc, 2, 8, 300)
	runCrawl(t, cfg)
	before := readStatsJSON(t, cfg.OutDir)
	cfg.Resume, cfg.MaxPages = true, 301
	res := runCrawl(t, cfg)
	after := readStatsJSON(t, cfg.OutDir)
	if res.Stats.Resumes != 1 {
		t.Fatalf("resumes %d, want 1", res.Stats.Resumes)
	}
	nonZero := 0
	for _, name := range declaredCounters() {
		b, okb := before[name].(float64)
		a, oka := after[name].(float64)
		if !okb || !oka {
			t.Errorf("%s: not a number in stats.json (%v before the resume, %v after)", name, before[name], after[name])
			continue
		}
		if a < b {
			t.Errorf("%s: %v after the resume, %v before: the checkpoint lost it", name, a, b)
		}
		if b > 0 {
			nonZero++
		}
	}
	// The test bites only for counters the first run counted: make sure
	// they are most of them.
	if nonZero < 12 {
		t.Errorf("only %d declared counters were non-zero before the resume", nonZero)
	}

	srv, err := monitor.Start(monitor.Options{Addr: "127.0.0.1:0", Stats: func() any { return res.Stats }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(0)
	got := scrapeCounters(t, srv.Addr())
	for _, name := range declaredCounters() {
		metric := monitor.Namespace + "_" + name + "_total"
		v, ok := got[metric]
		if !ok {
			t.Errorf("/metrics has no %s", metric)
		} else if v != after[name].(float64) {
			t.Errorf("%s = %v, stats.json %s = %v", metric, v, name, after[name])
		}
	}
}
