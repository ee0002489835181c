package main

import (
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// urlRows is node 0's URL log as a sorted multiset of URLs.
func urlRows(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, r := range crawltest.NodeURLRows(t, dir, 0) {
		out = append(out, r.URL)
	}
	sort.Strings(out)
	return out
}

// --due disk and --due memory give the same trace; on one node, where the
// URLs reaching the DUE are the node's whole full trace, the disk DUE's
// CLOCK cache hits exactly where a replay of the condensed trace through
// replay/policy's CLOCK of the same size hits.
func TestDiskDUE(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 10, 30, 0
	srv := crawltest.Serve(t, wc)
	seeds := srv.Web().Seeds()
	tmp := t.TempDir()
	mem, disk := filepath.Join(tmp, "mem"), filepath.Join(tmp, "disk")
	if code, _, errs := runCLI(t, crawlArgs(mem, srv.Addr(), seeds, "--due", "memory")...); code != 0 {
		t.Fatalf("memory DUE crawl: %d %s", code, errs)
	}
	const cache = 256
	if code, _, errs := runCLI(t, crawlArgs(disk, srv.Addr(), seeds, "--due", "disk", "--due-cache", "256", "--due-buffer", "500")...); code != 0 {
		t.Fatalf("disk DUE crawl: %d %s", code, errs)
	}
	mrows, drows := urlRows(t, mem), urlRows(t, disk)
	if !reflect.DeepEqual(mrows, drows) {
		t.Fatalf("URL logs differ: memory DUE %d rows, disk DUE %d rows", len(mrows), len(drows))
	}
	mp, _ := traceSets(t, mem)
	dp, _ := traceSets(t, disk)
	if !reflect.DeepEqual(mp, dp) {
		t.Fatalf("pages differ: memory DUE %d, disk DUE %d", len(mp), len(dp))
	}

	st := readStatsFile(t, filepath.Join(disk, "stats.json"))
	if st.DUE != "disk" || st.DUECacheSize != cache || st.DUEMerges < 2 || st.DUEMergeBytes == 0 || st.DUECacheAccesses != st.URLsLogged {
		t.Fatalf("stats %+v: want the disk DUE, merges, and one cache access per URL logged", st)
	}

	cond := filepath.Join(tmp, "condensed")
	if code, _, errs := runCLI(t, "condense", disk, "-o", cond); code != 0 {
		t.Fatalf("condense: %d %s", code, errs)
	}
	fps, _, err := tracefile.ReadCondensedAll(filepath.Join(cond, tracefile.CondensedName(0, tracefile.SubtraceFull)))
	if err != nil {
		t.Fatal(err)
	}
	p := policy.NewCLOCK(cache)
	var hits int64
	for _, fp := range fps {
		if p.Access(fp) {
			hits++
		}
	}
	replayRate := float64(hits) / float64(len(fps))
	t.Logf("%d URLs; DUE cache hit rate %.6f, replay %.6f", len(fps), st.DUECacheHitRate, replayRate)
	if int64(len(fps)) != st.DUECacheAccesses || hits != st.DUECacheHits || replayRate != st.DUECacheHitRate {
		t.Fatalf("DUE cache: %d hits of %d (rate %v); replay of CLOCK(%d): %d hits of %d (rate %v)",
			st.DUECacheHits, st.DUECacheAccesses, st.DUECacheHitRate, cache, hits, len(fps), replayRate)
	}
}
