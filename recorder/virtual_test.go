package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// localWebConfig is a deterministic crawl of the test web wc with nodes
// nodes of workers workers, up to maxPages pages, into a new directory.
func localWebConfig(t testing.TB, wc testweb.Config, nodes, workers int, maxPages int64) Config {
	t.Helper()
	web, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Seeds = web.Seeds()
	cfg.Nodes, cfg.Workers, cfg.MaxPages = nodes, workers, maxPages
	cfg.MinDelay = 0
	cfg.CrawlID = "determ"
	cfg.Local = &LocalWeb{Handler: web.Handler()}
	return cfg
}

// rowsFrom is every URL and page row of the crawl in dir, one line each,
// with its time made relative to the crawl's start (the manifest's
// created time): the virtual clock starts at the wall-clock start.
func rowsFrom(t *testing.T, dir string) (urls, pages []string) {
	t.Helper()
	man, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := man.Created.UnixNano()
	for _, r := range readURLs(t, dir) {
		r.Time -= t0
		urls = append(urls, fmt.Sprintf("%+v", r))
	}
	for _, p := range crawltest.PageRows(t, dir) {
		p.Time -= t0
		pages = append(pages, fmt.Sprintf("%+v", p))
	}
	return urls, pages
}

// sameLines fails t at the first line where a and b differ.
func sameLines(t *testing.T, what string, a, b []string) {
	t.Helper()
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("%s: row %d differs:\n  %s\n  %s", what, i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		t.Fatalf("%s: %d rows against %d", what, len(a), len(b))
	}
}

// TestDeterministicSmall: two deterministic crawls of a small web with
// several nodes and workers log the same rows, times included (relative
// to the start), and the same statistics; robots.txt, redirects, errors
// and Crawl-delay are all in the default web (its traps are left out, so
// that the crawl runs out of URLs).
func TestDeterministicSmall(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 12, 20, 0
	var urls, pages []string
	var st *Stats
	for run := range 2 {
		cfg := localWebConfig(t, wc, 3, 4, 0)
		res := runCrawl(t, cfg)
		u, p := rowsFrom(t, cfg.OutDir)
		if res.Stats.StopReason != StopDone || !res.Stats.Deterministic || res.Stats.VirtualSeconds <= 0 {
			t.Fatalf("run %d: stop %q, deterministic %v, virtual %.3fs", run, res.Stats.StopReason, res.Stats.Deterministic, res.Stats.VirtualSeconds)
		}
		if run == 0 {
			urls, pages, st = u, p, res.Stats
			if len(urls) < 1000 || st.BatchesSent == 0 || st.RobotsFetches == 0 {
				t.Fatalf("a crawl too small to tell: %d URL rows, %d batches, %d robots.txt", len(urls), st.BatchesSent, st.RobotsFetches)
			}
			continue
		}
		sameLines(t, "URL rows", urls, u)
		sameLines(t, "page rows", pages, p)
		a, b := *st, *res.Stats
		a.Seconds, b.Seconds, a.PagesPerSecond, b.PagesPerSecond, a.PeakRSSBytes, b.PeakRSSBytes = 0, 0, 0, 0, 0, 0
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("statistics differ:\n  %s\n  %s", ja, jb)
		}
	}
}

// TestDeterministicCondense: two deterministic crawls of 5,000 pages
// over 4 nodes log equal rows (times relative to the start) and condense
// to equal traces, fingerprint by fingerprint.
func TestDeterministicCondense(t *testing.T) {
	if testing.Short() {
		t.Skip("two 5,000-page crawls")
	}
	t.Parallel() // on the virtual clock: it overlaps with the crawls that wait on the test web
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost = 100, 100
	var urls, pages []string
	var traces map[string][]uint64
	for run := range 2 {
		cfg := localWebConfig(t, wc, 4, 16, 5000)
		res := runCrawl(t, cfg)
		if res.Stats.StopReason != StopMaxPages || res.Stats.FetchAttempts != 5000 {
			t.Fatalf("run %d: stop %q after %d pages", run, res.Stats.StopReason, res.Stats.FetchAttempts)
		}
		u, p := rowsFrom(t, cfg.OutDir)
		cc := condense.DefaultConfig()
		cc.Input, cc.Output = cfg.OutDir, filepath.Join(t.TempDir(), "condensed")
		if _, err := condense.Run(context.Background(), cc); err != nil {
			t.Fatal(err)
		}
		tr := map[string][]uint64{}
		for n := range 4 {
			for _, sub := range []string{tracefile.SubtraceFull, tracefile.SubtraceCross} {
				name := tracefile.CondensedName(n, sub)
				fps, _, err := tracefile.ReadCondensedAll(filepath.Join(cc.Output, name))
				if err != nil {
					t.Fatal(err)
				}
				tr[name] = fps
			}
		}
		if run == 0 {
			urls, pages, traces = u, p, tr
			t.Logf("%d URL rows, %d page rows, %.1f virtual seconds in %.1f s", len(u), len(p), res.Stats.VirtualSeconds, res.Stats.Seconds)
			continue
		}
		sameLines(t, "URL rows", urls, u)
		sameLines(t, "page rows", pages, p)
		for name, fps := range traces {
			other := tr[name]
			if len(fps) != len(other) {
				t.Fatalf("%s: %d fingerprints against %d", name, len(fps), len(other))
			}
			for i := range fps {
				if fps[i] != other[i] {
					t.Fatalf("%s: fingerprint %d differs", name, i)
				}
			}
		}
	}
}

// TestDeterministicDuration: Duration is virtual time in a deterministic
// crawl, and a crawl it stops is as repeatable as any.
func TestDeterministicDuration(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost = 10, 50
	var urls []string
	for run := range 2 {
		cfg := localWebConfig(t, wc, 2, 4, 0)
		cfg.Duration = 2 * time.Second
		res := runCrawl(t, cfg)
		if res.Stats.StopReason != StopDuration || res.Stats.VirtualSeconds > 2.001 {
			t.Fatalf("stop %q after %.3f virtual seconds", res.Stats.StopReason, res.Stats.VirtualSeconds)
		}
		u, _ := rowsFrom(t, cfg.OutDir)
		if run == 0 {
			urls = u
			continue
		}
		sameLines(t, "URL rows", urls, u)
	}
}

// TestLocalWebRefused: what a deterministic crawl cannot do is refused
// before anything is written.
func TestLocalWebRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
	}{
		{"peers", func(c *Config) { c.Peers, c.Token = []string{"127.0.0.1:1"}, "t" }},
		{"ip", func(c *Config) { c.PolitenessKey = PolitenessIP }},
		{"no handler", func(c *Config) { c.Local = &LocalWeb{} }},
	} {
		cfg := localWebConfig(t, testweb.DefaultConfig(), 1, 1, 0)
		tc.set(&cfg)
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want a configuration error", tc.name, err)
		}
	}
}

// TestDeterministicResume: a deterministic crawl stopped at its budget
// and resumed with a larger one is as repeatable as one run (the virtual
// clock goes on from the checkpoint, where the frontier's politeness
// times and robots.txt dates are), and its rows' times never go back.
func TestDeterministicResume(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost = 50, 50
	var first []string
	var virtual float64
	for run := range 2 {
		cfg := localWebConfig(t, wc, 2, 8, 1000)
		runCrawl(t, cfg)
		cfg.Resume, cfg.MaxPages = true, 2000
		res := runCrawl(t, cfg)
		if res.Stats.FetchAttempts != 2000 {
			t.Fatalf("resumed crawl made %d fetches in all", res.Stats.FetchAttempts)
		}
		for n := range 2 {
			var last int64
			for i, r := range crawltest.NodeURLRows(t, cfg.OutDir, n) {
				if r.Time < last {
					t.Fatalf("node %d: URL row %d is earlier than the one before", n, i)
				}
				last = r.Time
			}
		}
		urls, pages := rowsFrom(t, cfg.OutDir)
		rows := append(urls, pages...)
		if run == 0 {
			first, virtual = rows, res.Stats.VirtualSeconds
			continue
		}
		sameLines(t, "rows of the resumed crawl", first, rows)
		if res.Stats.VirtualSeconds != virtual {
			t.Errorf("the resumed runs took %v and %v virtual seconds", virtual, res.Stats.VirtualSeconds)
		}
	}
}
