package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/sampledata"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// The real sites: HTML trees of Debian documentation packages, made by
// three different generators, served by `testweb --site` under the names
// of the sites they mirror. .ci/docsites installs the packages.
var realSites = []struct {
	host, dir, pkg, generator string
}{
	{"www.postgresql.org", "/usr/share/doc/postgresql-doc-15/html", "postgresql-doc-15", "DocBook"},
	{"docs.python.org", "/usr/share/doc/python3.11/html", "python3.11-doc", "Sphinx"},
	{"git-scm.com", "/usr/share/doc/git-doc", "git-doc", "AsciiDoc"},
}

// TestRealSiteCrawl crawls three real documentation sites served by a
// testweb child process, over HTTP and HTTPS (a test CA the crawler is
// given with --ca-file), with a crawl child process of two nodes:
//
//	www.postgresql.org  http live, https dead (connection refused)
//	docs.python.org     http dead, https live (seeded with its https URL)
//	git-scm.com         http and https live
//	every other host    http answered by testweb (404, unknown host),
//	                    https and every other port dead
//
// The pages link https:// and http:// URLs of their own hosts and of
// hundreds of others, so hundreds of hosts have a live http origin and a
// dead https one, in either order. The crawl must end on its own
// (frontier empty, not a time limit), fetch exactly the URLs of live
// origins that an independent reference (realweb_ref_test.go) reaches
// from the same seeds over the files on disk, log exactly its distinct
// URLs, count every URL of a dead origin as robots-excluded, leave no
// host waiting more than a few seconds beyond its politeness delay, and
// fetch every page of a live origin before the dead origins' robots.txt
// retries (--robots-retry 30s): no live origin waits for a dead one.
func TestRealSiteCrawl(t *testing.T) {
	longOnly(t)
	if testing.Short() {
		t.Skip("crawls three real sites with child processes")
	}
	// Not parallel: the test asserts that every live origin is done within
	// --robots-retry (30 s), and beside the other child-process tests the
	// crawl took 62 s and a live fetch came after the first retry (a CI
	// run on 2 cores).
	for _, s := range realSites {
		sampledata.Installed(t, s.dir, s.pkg)
	}
	tmp := t.TempDir()
	caFile := filepath.Join(tmp, "ca.pem")
	args := []string{"testweb", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--ca-out", caFile,
		"--hosts", "0", "--traps", "0"}
	for _, s := range realSites {
		args = append(args, "--site", s.host+"="+s.dir)
	}
	webLog := filepath.Join(tmp, "testweb.log")
	startProc(t, webLog, args...)
	var httpAddr, tlsAddr string
	httpRe := regexp.MustCompile(`static sites\) on http://([0-9.:]+)/`)
	tlsRe := regexp.MustCompile(`serving https on https://([0-9.:]+)/`)
	crawltest.WaitFor(t, "testweb's addresses", 30*time.Second, func() bool {
		b, _ := os.ReadFile(webLog)
		h, s := httpRe.FindSubmatch(b), tlsRe.FindSubmatch(b)
		if h == nil || s == nil {
			return false
		}
		httpAddr, tlsAddr = string(h[1]), string(s[1])
		return true
	})
	dead := freePorts(t, 1)[0] // closed: connections are refused

	seeds := []string{"http://www.postgresql.org/", "https://docs.python.org/", "http://git-scm.com/", "https://git-scm.com/"}
	sites := map[string]string{
		"http://www.postgresql.org": realSites[0].dir,
		"https://docs.python.org":   realSites[1].dir,
		"http://git-scm.com":        realSites[2].dir,
		"https://git-scm.com":       realSites[2].dir,
	}
	origin := func(o string) (string, bool) {
		if dir, ok := sites[o]; ok {
			return dir, true
		}
		// Any other host's http on port 80, docs.python.org's excepted.
		return "", strings.HasPrefix(o, "http://") && !strings.Contains(strings.TrimPrefix(o, "http://"), ":") &&
			o != "http://docs.python.org"
	}
	const retry = 30 * time.Second
	dir := filepath.Join(tmp, "crawl")
	crawl := startProc(t, filepath.Join(tmp, "crawl.log"), append([]string{"crawl", "-o", dir,
		"--nodes", "2", "--min-delay", "0", "--allow-private", "--robots-retry", retry.String(), "--ca-file", caFile,
		"--duration", "150s", // a bound only: the crawl must end before, on its own
		"--resolve", "www.postgresql.org:80:" + httpAddr,
		"--resolve", "www.postgresql.org:443:" + dead,
		"--resolve", "docs.python.org:80:" + dead,
		"--resolve", "docs.python.org:443:" + tlsAddr,
		"--resolve", "git-scm.com:80:" + httpAddr,
		"--resolve", "git-scm.com:443:" + tlsAddr,
		"--resolve", "*:80:" + httpAddr,
		"--resolve", "*:" + dead,
	}, seeds...)...)

	// The reference, while the crawl runs.
	ref, err := newRefCrawl(origin, seeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ref.undecided {
		t.Errorf("reference: %v (extend rule difference 7 in realweb_ref_test.go)", e)
	}
	perOrigin := map[string]int{}
	for u := range ref.fetched {
		perOrigin[originOf(u)]++
	}
	deadOrigins := map[string]int{}
	for u := range ref.dead {
		deadOrigins[originOf(u)]++
	}
	siteCounts := map[string]int{}
	for o := range sites {
		siteCounts[o] = perOrigin[o]
	}
	t.Logf("reference: %d URLs, %d fetched (sites %v, %d other live origins), %d HTML pages read, %d on %d dead origins (https://www.postgresql.org %d, http://docs.python.org %d)",
		len(ref.urls), len(ref.fetched), siteCounts, len(perOrigin)-len(sites), ref.pages, len(ref.dead), len(deadOrigins),
		deadOrigins["https://www.postgresql.org"], deadOrigins["http://docs.python.org"])
	// The scenario is what it claims: every live origin has pages, and the
	// pages link the dead https origin of a live http host.
	for o := range sites {
		if perOrigin[o] < 50 {
			t.Errorf("reference: only %d URLs fetched on %s", perOrigin[o], o)
		}
	}
	if deadOrigins["https://www.postgresql.org"] == 0 {
		t.Errorf("reference: no URL of the dead https://www.postgresql.org")
	}
	mixed := 0 // other hosts with a live http and a dead https origin
	for o := range perOrigin {
		if _, site := sites[o]; !site && deadOrigins["https"+strings.TrimPrefix(o, "http")] > 0 {
			mixed++
		}
	}
	if mixed == 0 {
		t.Errorf("reference: no other host with a live http and a dead https origin")
	}

	if err := crawl.wait(t, "crawl", 180*time.Second); err != nil {
		b, _ := os.ReadFile(crawl.log)
		t.Fatalf("crawl: %v\n%s", err, tail(string(b), 3000))
	}
	st := readStatsFile(t, filepath.Join(dir, recorder.StatsName))
	if st.StopReason != recorder.StopDone {
		t.Errorf("stop reason %q, want %q (the crawl ends on its own)", st.StopReason, recorder.StopDone)
	}
	pages, urls := traceSets(t, dir)
	compareSets(t, "distinct URLs logged", urls, ref.urls)
	compareSets(t, "pages fetched", pages, ref.fetched)
	if st.FetchAttempts != int64(len(ref.fetched)) {
		t.Errorf("fetch attempts %d, want %d (each URL of a live origin once)", st.FetchAttempts, len(ref.fetched))
	}
	if st.RobotsExcluded != int64(len(ref.dead)) {
		t.Errorf("robots_excluded %d, want %d, the URLs of the dead origins", st.RobotsExcluded, len(ref.dead))
	}
	// Every fetch of a live origin (its robots.txt included) comes before
	// the first robots.txt retry of a dead one.
	var lastLive, firstRetry int64
	var lastLiveURL, firstRetryURL string
	robotsTries := map[string]int{}
	for _, r := range allPageRows(t, dir) {
		if r.Status != 0 && r.Time > lastLive {
			lastLive, lastLiveURL = r.Time, r.URL
		}
		if r.Status == 0 && strings.HasSuffix(r.URL, "/robots.txt") {
			if robotsTries[r.URL]++; robotsTries[r.URL] == 2 && (firstRetry == 0 || r.Time < firstRetry) {
				firstRetry, firstRetryURL = r.Time, r.URL
			}
		}
	}
	if firstRetry == 0 || lastLive >= firstRetry {
		t.Errorf("last fetch of a live origin (%s) %.1fs after the first robots.txt retry of a dead one (%s): a live origin waited for a dead one",
			lastLiveURL, float64(lastLive-firstRetry)/1e9, firstRetryURL)
	}
	if st.MaxStallSeconds >= 5 {
		t.Errorf("max_stall_seconds %.2f (%s), want < 5", st.MaxStallSeconds, st.MaxStallHost)
	}
	t.Logf("crawl: %s after %.1fs, %d fetches, %d URLs logged, %d robots-excluded, longest stall %.2fs",
		st.StopReason, st.Seconds, st.FetchAttempts, st.URLsLogged, st.RobotsExcluded, st.MaxStallSeconds)
}

// compareSets fails the test, with up to 10 examples each way, unless got
// and want hold the same strings.
func compareSets(t *testing.T, what string, got, want map[string]bool) {
	t.Helper()
	extra, missing := setDiff(got, want), setDiff(want, got)
	if len(extra) == 0 && len(missing) == 0 {
		return
	}
	t.Errorf("%s: crawler %d, reference %d; %d only in the crawl, e.g.\n  %s\n%d only in the reference, e.g.\n  %s",
		what, len(got), len(want), len(extra), strings.Join(head(extra, 10), "\n  "), len(missing), strings.Join(head(missing, 10), "\n  "))
}

func setDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// allPageRows is every row of every node's page log, robots.txt fetches
// included, in time order.
func allPageRows(t *testing.T, dir string) []tracefile.PageRecord {
	t.Helper()
	out := crawltest.PageRows(t, dir)
	sort.Slice(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}
