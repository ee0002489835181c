package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/sampledata"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// needTool returns the path of a program the test starts for real
// (Prometheus, chromium), skipping the test where it is missing, and
// failing it in CI (CI=true), where .ci/run installs it.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		sampledata.Missing(t, fmt.Sprintf("%s not found (Debian: apt-get install %s; .ci/monitoring installs it)", name, pkg))
	}
	return p
}

// statsMetrics is what the final scrape must hold for a stats.json: every
// number of it under its metric name (recorder/monitor's rules), maps by
// label value.
func statsMetrics(t *testing.T, s recorder.Stats) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	structMetrics(reflect.ValueOf(s), out)
	return out
}

// structMetrics adds v's fields to out; an embedded struct's fields are
// v's own, as in stats.json.
func structMetrics(v reflect.Value, out map[string]float64) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		kind, label, _ := strings.Cut(f.Tag.Get("metric"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			structMetrics(v.Field(i), out)
			continue
		}
		if name == "" || name == "-" || kind == "-" {
			continue
		}
		x := v.Field(i)
		counter := f.Type.Kind() == reflect.Int64 || f.Type.Kind() == reflect.Map
		if kind == "gauge" {
			counter = false
		} else if kind == "counter" {
			counter = true
		}
		metric := "crawltrace_" + name
		if counter {
			metric += "_total"
		}
		switch f.Type.Kind() {
		case reflect.Int, reflect.Int64:
			out[metric] = float64(x.Int())
		case reflect.Uint64:
			out[metric] = float64(x.Uint())
		case reflect.Float64:
			out[metric] = x.Float()
		case reflect.Map:
			if label == "" {
				label = "key"
			}
			for _, k := range x.MapKeys() {
				out[fmt.Sprintf("%s{%s=%q}", metric, label, k.String())] = float64(x.MapIndex(k).Int())
			}
		}
	}
}

// promQuery runs an instant query on the Prometheus at addr.
func promQuery(t *testing.T, addr, q string) []struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
} {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("prometheus query %q: %v %s", q, err, r.Error)
	}
	return r.Data.Result
}

// TestPrometheusScrapesCluster: a real Prometheus scrapes the --metrics
// of a running 3-process crawl; once the crawl is over, the last value
// it scraped of every metric of every node equals that node's
// stats.json.
func TestPrometheusScrapesCluster(t *testing.T) {
	t.Parallel() // child processes: it overlaps with the others
	prom := needTool(t, "prometheus", "prometheus")
	web := startClusterWeb(t, 12, 30)
	metrics := freePorts(t, 4)
	promAddr := metrics[3]
	dir := t.TempDir()
	var targets []string
	for i := range 3 {
		targets = append(targets, strconv.Quote(metrics[i]))
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 100ms\n  scrape_timeout: 90ms\nscrape_configs:\n  - job_name: crawl\n    static_configs:\n      - targets: [%s]\n",
		strings.Join(targets, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	plog, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer plog.Close()
	cmd.Stdout, cmd.Stderr = plog, plog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	crawltest.WaitFor(t, "prometheus to be ready", 60*time.Second, func() bool {
		resp, err := http.Get("http://" + promAddr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// Prometheus scrapes the three addresses (down: up is 0) before the
	// nodes start, so a crawl of a few seconds is scraped while it runs.
	crawltest.WaitFor(t, "prometheus to scrape the three targets", 60*time.Second, func() bool {
		return len(promQuery(t, promAddr, "up")) == 3
	})
	c := &cluster{dir: filepath.Join(t.TempDir(), "crawl"), peers: freePorts(t, 3), web: web,
		extra: []string{"--min-delay", "20ms", "--metrics-linger", "20s"}}
	c.procs = make([]*proc, 3)
	for i := range 3 {
		c.procs[i] = c.start(t, i, "--metrics", metrics[i])
	}
	// Scraped while it runs: some node has fetched pages and is not done.
	crawltest.WaitFor(t, "a scrape of a running node with pages fetched", 60*time.Second, func() bool {
		for _, r := range promQuery(t, promAddr, "crawltrace_fetch_attempts_total") {
			if v, _ := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64); v > 0 {
				return true
			}
		}
		return false
	})
	c.waitNodes(t, 120*time.Second)
	for i := range 3 {
		st := readStats(t, c.dir, i)
		want := statsMetrics(t, st)
		got := map[string]float64{}
		for _, r := range promQuery(t, promAddr, fmt.Sprintf(`last_over_time({__name__=~"crawltrace_.+", node="%d"}[5m])`, i)) {
			name := r.Metric["__name__"]
			for _, l := range []string{"status", "reason", "key"} {
				if v, ok := r.Metric[l]; ok {
					name = fmt.Sprintf("%s{%s=%q}", name, l, v)
				}
			}
			v, err := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
			if err != nil {
				t.Fatalf("node %d: %s: %v", i, name, err)
			}
			got[name] = v
			if r.Metric["crawl_id"] != "cluster-test" {
				t.Errorf("node %d: %s has crawl_id %q", i, name, r.Metric["crawl_id"])
			}
		}
		if st.FetchAttempts == 0 {
			t.Fatalf("node %d fetched nothing", i)
		}
		for name, w := range want {
			g, ok := got[name]
			if !ok {
				t.Errorf("node %d: Prometheus has no %s (stats.json: %v)", i, name, w)
			} else if g != w {
				t.Errorf("node %d: %s last scraped %v, stats.json %v", i, name, g, w)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("node %d: Prometheus has %s, which stats.json does not", i, name)
			}
		}
	}
}

var pagesRe = regexp.MustCompile(`id="pages">([0-9,]+)<`)
var pointsRe = regexp.MustCompile(`id="line-rate"[^>]*points="([^"]+)"`)

// TestStatusPageInChromium: a real headless chromium loads a running
// crawl's status page twice; each time the page shows the page count
// from the crawl and draws its chart, and the count has risen between
// the two loads.
func TestStatusPageInChromium(t *testing.T) {
	t.Parallel() // child processes: it overlaps with the others
	chromium := needTool(t, "chromium", "chromium")
	// A crawl of about 20 s (60 pages a host, 200 ms apart): the page is
	// loaded twice well before its end.
	web := startClusterWeb(t, 12, 60)
	addr := freePorts(t, 1)[0]
	dir := filepath.Join(t.TempDir(), "crawl")
	p := startProc(t, filepath.Join(filepath.Dir(dir), "crawl.log"), "crawl", "-o", dir, "--resolve", "*:"+web.addr,
		"--allow-private", "--seeds", web.seeds, "--workers", "4", "--min-delay", "200ms", "--delay-factor", "0",
		"--metrics", addr)
	defer p.cmd.Process.Kill()
	load := func() (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// --virtual-time-budget lets the page's script run (its first
		// fetch of /stats.json) before the DOM is dumped.
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", "http://"+addr+"/")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		m := pagesRe.FindSubmatch(out)
		if m == nil {
			t.Fatalf("the page shows no page count:\n%s", tail(string(out), 2000))
		}
		n, _ := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
		var pts string
		if m := pointsRe.FindSubmatch(out); m != nil {
			pts = string(m[1])
		}
		return n, pts
	}
	// live is what /stats.json says now: pages fetched and samples kept.
	live := func() (pages int64, samples int) {
		resp, err := http.Get("http://" + addr + "/stats.json")
		if err != nil {
			return -1, 0
		}
		defer resp.Body.Close()
		var d struct {
			Stats   recorder.Stats `json:"stats"`
			Samples []any          `json:"samples"`
		}
		if json.NewDecoder(resp.Body).Decode(&d) != nil {
			return -1, 0
		}
		return d.Stats.FetchAttempts, len(d.Samples)
	}
	crawltest.WaitFor(t, "the crawl to fetch pages", 30*time.Second, func() bool { p, _ := live(); return p > 0 })
	first, _ := load()
	// The second load once the crawl has fetched more than the first saw,
	// and the page has samples enough to draw a line.
	crawltest.WaitFor(t, "the crawl to fetch more pages", 60*time.Second, func() bool {
		p, n := live()
		return p > int64(first)+10 && n >= 3
	})
	second, points := load()
	if second <= first {
		t.Errorf("page count %d then %d: not rising", first, second)
	}
	if strings.Count(points, ",") < 2 {
		t.Errorf("the chart's line has too few points: %q", points)
	}
}
