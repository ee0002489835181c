package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/crawltrace/crawltrace/internal/gowarctest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/internal/warciotest"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/recorder/warcout"
)

// warcFiles lists node's WARC files in dir, in series order.
func warcFiles(t testing.TB, dir string, node int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tracefile.NodeDir(dir, node), warcout.DirName, "*"+warcout.Suffix))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files of node %d in %s (%v)", node, dir, err)
	}
	return files
}

// warcRecord is one record as the Go library reads it back.
type warcRec struct {
	Type, URI, Digest, PageID string
}

// readGoWARC reads files with the library crawl --warc writes with,
// strictly (any validation finding fails the test).
func readGoWARC(t testing.TB, files []string) []warcRec {
	t.Helper()
	var out []warcRec
	gowarctest.Each(t, files, func(rec gowarc.WarcRecord) {
		h := rec.WarcHeader()
		out = append(out, warcRec{rec.Type().String(), h.Get(gowarc.WarcTargetURI), h.Get(gowarc.WarcPayloadDigest), h.Get(warcout.PageIDField)})
	})
	return out
}

// checkWARCio reads the crawl's WARC files with warcio: every file read
// to its end, every record crawltrace wrote there (the count stats.json
// gives, the target URIs and payload digests the Go library reads back),
// every payload digest the sha1 of the payload warcio read.
func checkWARCio(t *testing.T, files []string, want []warcRec, stats recorder.Stats) {
	t.Helper()
	var got []warcRec
	for _, f := range warciotest.Read(t, files...) {
		if f.Error != "" {
			t.Errorf("warcio: %s: %s", f.Path, f.Error)
		}
		for _, r := range f.Records {
			got = append(got, warcRec{r.Type, r.URI, r.PayloadDigest, r.PageID})
			if r.Computed != r.PayloadDigest && r.Type != "warcinfo" {
				t.Errorf("warcio: %s %s: payload digest %s, warcio computes %s", r.Type, r.URI, r.PayloadDigest, r.Computed)
			}
		}
	}
	if int64(len(got)) != stats.WARCRecords {
		t.Errorf("warcio read %d records, stats.json says %d were written", len(got), stats.WARCRecords)
	}
	if !sameRows(t, "record", "warcio", "gowarc", got, want) {
		t.Errorf("warcio read %d records, the Go library %d", len(got), len(want))
	}
}

// sameRows reports whether a and b hold the same rows in the same order;
// where they do not, it fails the test naming the first row that differs
// (a row of what, aName's against bName's), if either has one.
func sameRows[T comparable](t testing.TB, what, aName, bName string, a, b []T) bool {
	t.Helper()
	if slices.Equal(a, b) {
		return true
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Errorf("%s %d: %s %+v, %s %+v", what, i, aName, a[i], bName, b[i])
			break
		}
	}
	return false
}

// The round trip: a crawl of the local web with --warc (files rotated at
// 64 KiB), then import warc of its WARC, gives the crawl's own URL trace:
// the same URLs, kinds and tags, page by page, in the same order (the
// seeds aside: they come from no page). warcio reads every record.
func TestWARCRoundTrip(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 6, 20, 0
	srv := crawltest.Serve(t, wc)
	dir := filepath.Join(t.TempDir(), "crawl")
	if code, out, errs := runCLI(t, crawlArgs(dir, srv.Addr(), srv.Web().Seeds(), "--warc", "--warc-file-size", "64KiB", "--progress", "never")...); code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, out, errs)
	}
	stats := readStatsFile(t, filepath.Join(dir, recorder.StatsName))
	files := warcFiles(t, dir, 0)
	imported := filepath.Join(t.TempDir(), "imported")
	if code, out, errs := runCLI(t, append([]string{"import", "warc", "-o", imported}, files...)...); code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errs)
	}

	// Each log as (page rank, URL, kind, tag): the rank of the page the
	// URL came from among the pages that gave URLs, in order.
	type row struct {
		page           int
		url, kind, tag string
	}
	rows := func(recs []tracefile.URLRecord) []row {
		rank := map[uint64]int{}
		var out []row
		for _, r := range recs {
			if r.Kind == tracefile.URLSeed {
				continue
			}
			if _, ok := rank[r.Source]; !ok {
				rank[r.Source] = len(rank)
			}
			out = append(out, row{rank[r.Source], r.URL, r.Kind, r.Tag})
		}
		return out
	}
	crawled, back := rows(crawltest.URLRows(t, dir)), rows(crawltest.URLRows(t, imported))
	if len(crawled) < 1000 {
		t.Fatalf("the crawl logged %d URLs: too small a web", len(crawled))
	}
	if !sameRows(t, "row", "crawl", "import", crawled, back) {
		t.Fatalf("crawl logged %d URLs, the import of its WARC %d", len(crawled), len(back))
	}
	if len(files) < 2 || stats.WARCFiles != int64(len(files)) {
		t.Errorf("%d files, stats %d: want the series rotated", len(files), stats.WARCFiles)
	}
	t.Logf("%d URLs from %d pages; %d WARC records, %d bytes in %d files", len(crawled), back[len(back)-1].page+1, stats.WARCRecords, stats.WARCBytes, len(files))
	checkWARCio(t, files, readGoWARC(t, files), stats)
}

// A crawl with --warc killed with kill -9 three times, each time after a
// checkpoint, and resumed to its end: the Go library and warcio read every
// file to its end with no error, and each fetch of the page log that got
// a response has exactly one response record (by its page id, with its
// URL), in log order; no other response is left.
func TestWARCKill9Resume(t *testing.T) {
	longOnly(t)
	childProcesses(t, "crawls a test web in child processes")
	srv, seeds := resumeWeb(t)
	dir := filepath.Join(t.TempDir(), "killed")
	args := crawlArgs(dir, srv.Addr(), seeds, "--warc", "--warc-file-size", "256KiB", "--checkpoint-every", "300ms")
	for kill := 1; kill <= 3; kill++ {
		a := args
		if kill > 1 {
			a = []string{"crawl", "-o", dir, "--resume"}
		}
		// Killed at least 1 s in, after a checkpoint of this run.
		p := startProc(t, filepath.Join(t.TempDir(), fmt.Sprintf("run-%d.log", kill)), a...)
		kill9AfterCheckpoint(t, p, dir, time.Second)
	}
	if code, out, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--progress", "never"); code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	stats := readStatsFile(t, filepath.Join(dir, recorder.StatsName))
	files := warcFiles(t, dir, 0)
	recs := readGoWARC(t, files)

	var want []warcRec // the page log's fetches that got a response
	crawltest.EachPageRow(t, dir, 0, func(p tracefile.PageRecord) {
		if p.Status > 0 {
			want = append(want, warcRec{Type: "response", URI: p.URL, PageID: strconv.FormatUint(p.ID, 10)})
		}
	})
	var got []warcRec
	seen := map[string]int{}
	for _, r := range recs {
		if r.Type == "response" {
			got = append(got, warcRec{Type: r.Type, URI: r.URI, PageID: r.PageID})
			seen[r.PageID]++
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("page %s has %d response records", id, n)
		}
	}
	if !sameRows(t, "response", "WARC", "page log", got, want) {
		t.Errorf("%d response records, %d fetches with a response in the page log", len(got), len(want))
	}
	if stats.Resumes != 3 || stats.DiscardedWARCBytes == 0 || stats.WARCResponses != int64(len(got)) {
		t.Errorf("stats: %d resumes, %d WARC bytes discarded, %d responses: want 3, > 0, %d", stats.Resumes, stats.DiscardedWARCBytes, stats.WARCResponses, len(got))
	}
	t.Logf("%d fetches, %d WARC records in %d files, %d bytes cut by the resumes", len(want), len(recs), len(files), stats.DiscardedWARCBytes)
	checkWARCio(t, files, recs, stats)
}
