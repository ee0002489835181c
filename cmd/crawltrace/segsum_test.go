package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// twoRunCrawl crawls a small test web in dir in two runs: 15 pages, then
// a resume to 30, so that the first run's segments are closed ones the
// checkpoint and the manifest list. It returns the manifest's segments.
func twoRunCrawl(t *testing.T, srv *testweb.Server, dir string) []tracefile.SegmentInfo {
	t.Helper()
	if code, _, errs := runCLI(t, crawlArgs(dir, srv.Addr(), srv.Web().Seeds(), "--max-pages", "15")...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--max-pages", "30", "--progress", "never"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	m, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	segs := append(m.NodeInfo[0].URLSegments, m.NodeInfo[0].PageSegments...)
	if len(segs) != 4 {
		t.Fatalf("the manifest lists %+v; want two URL and two page segments", segs)
	}
	return segs
}

// stripManifestHashes rewrites dir's manifest.json as a crawltrace that
// did not record segment hashes wrote it.
func stripManifestHashes(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, tracefile.ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m tracefile.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i := range m.NodeInfo {
		for _, l := range [][]tracefile.SegmentInfo{m.NodeInfo[i].URLSegments, m.NodeInfo[i].PageSegments} {
			for j := range l {
				l[j].XXH64 = ""
			}
		}
	}
	if err := tracefile.WriteManifest(dir, &m); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("xxhash64")) {
		t.Fatal("hashes left in the manifest")
	}
}

// A crawl's manifest records each segment's size and xxhash64 (those of
// the file's bytes); inspect --verify checks them and a resume checks
// them: a URL byte flipped in a closed segment, or a segment truncated,
// fails inspect --verify naming the file (exit 2) and refuses the resume
// naming it (exit 2); a crawl whose manifest has no hashes (an older
// crawltrace) verifies with its segments unchecked, exit 0; an untouched
// crawl verifies clean and resumes.
func TestVerifyAndResumeCheckSegments(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 3, 30, 0
	srv := crawltest.Serve(t, wc)

	t.Run("untouched", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "crawl")
		segs := twoRunCrawl(t, srv, dir)
		for _, s := range segs {
			b, err := os.ReadFile(filepath.Join(tracefile.NodeDir(dir, 0), s.File))
			if err != nil {
				t.Fatal(err)
			}
			if sum := fmt.Sprintf("%016x", xxhash.Sum64(b)); s.XXH64 != sum || s.Bytes != int64(len(b)) {
				t.Errorf("manifest: %s: %d bytes, xxhash64 %q; the file: %d bytes, %s", s.File, s.Bytes, s.XXH64, len(b), sum)
			}
		}
		code, out, errs := runCLI(t, "inspect", "--verify", dir)
		if code != 0 || strings.Count(out, "size and xxhash64 OK") != len(segs) {
			t.Errorf("inspect --verify: exit %d, stderr %q; want 0 and %d segments checked:\n%s", code, errs, len(segs), out)
		}
		if code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--max-pages", "45", "--progress", "never"); code != 0 {
			t.Fatalf("resume: exit %d: %s", code, errs)
		}
		if code, out, errs := runCLI(t, "inspect", "--verify", dir); code != 0 || strings.Count(out, "size and xxhash64 OK") != len(segs)+2 {
			t.Errorf("inspect --verify after a third run: exit %d, stderr %q:\n%s", code, errs, out)
		}
	})

	t.Run("flipped", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "crawl")
		segs := twoRunCrawl(t, srv, dir)
		bad := filepath.Join(tracefile.NodeDir(dir, 0), tracefile.SegmentName(tracefile.PrefixURLs, 1))
		crawltest.FlipURL(t, bad)
		refusedWith(t, 2, bad, "inspect", "--verify", dir)
		code, out, _ := runCLI(t, "inspect", "--verify", dir)
		if lines := linesHaving(out, "FAILED"); code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], bad+": ") ||
			!strings.Contains(lines[0], "xxhash64 mismatch") || !strings.Contains(lines[0], segs[0].XXH64) {
			t.Errorf("inspect --verify: exit %d; want 2 and one FAILED line naming %s and its recorded hash %s:\n%s", code, bad, segs[0].XXH64, out)
		}
		refusedWith(t, 2, bad, "crawl", "-o", dir, "--resume", "--max-pages", "45")
		if _, errs := runCLIErr(t, "crawl", "-o", dir, "--resume", "--max-pages", "45"); !strings.Contains(errs, "xxhash64 mismatch") {
			t.Errorf("resume refused with %q; want the hash mismatch", errs)
		}

		// The same crawl as an older crawltrace wrote it: no hashes.
		// The flip goes unseen (the segment reads well), and every
		// segment says it was not checked.
		stripManifestHashes(t, dir)
		code, out, errs := runCLI(t, "inspect", "--verify", dir)
		if code != 0 || strings.Count(out, "unchecked") != len(segs) || strings.Contains(out, "FAILED") {
			t.Errorf("inspect --verify without hashes: exit %d, stderr %q; want 0 and %d unchecked segments:\n%s", code, errs, len(segs), out)
		}
	})

	t.Run("truncated", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "crawl")
		twoRunCrawl(t, srv, dir)
		bad := filepath.Join(tracefile.NodeDir(dir, 0), tracefile.SegmentName(tracefile.PrefixPages, 1))
		st, err := os.Stat(bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(bad, st.Size()-8); err != nil { // the end-of-stream marker
			t.Fatal(err)
		}
		refusedWith(t, 2, bad, "inspect", "--verify", dir)
		// The size is checked even when the hashes are not.
		refusedWith(t, 2, bad, "crawl", "-o", dir, "--resume", "--max-pages", "45", "--resume-skip-hash")
		if _, errs := runCLIErr(t, "crawl", "-o", dir, "--resume", "--max-pages", "45"); !strings.Contains(errs, fmt.Sprintf("%d bytes", st.Size()-8)) {
			t.Errorf("resume refused with %q; want the size", errs)
		}
	})
}

func runCLIErr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, _, errs := runCLI(t, args...)
	return code, errs
}

func linesHaving(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// A crawl killed with kill -9 has no manifest: inspect --verify checks
// the segments its latest checkpoint lists (the open one's checkpointed
// prefix), and a URL byte flipped in that prefix fails it, naming the
// file, and refuses the resume.
func TestKill9VerifySegments(t *testing.T) {
	childProcesses(t, "starts a crawl process")
	srv, seeds := resumeWeb(t)
	dir := filepath.Join(t.TempDir(), "crawl")
	p := startProc(t, filepath.Join(t.TempDir(), "crawl.log"), crawlArgs(dir, srv.Addr(), seeds, "--checkpoint-every", "300ms")...)
	kill9AfterCheckpoint(t, p, dir, 2*time.Second)
	if _, err := os.Stat(filepath.Join(dir, tracefile.ManifestName)); err == nil {
		t.Fatal("a killed crawl wrote a manifest")
	}
	seg := filepath.Join(tracefile.NodeDir(dir, 0), tracefile.SegmentName(tracefile.PrefixURLs, 1))
	code, out, errs := runCLI(t, "inspect", "--verify", dir)
	if lines := linesHaving(out, seg+": "); code != 0 || len(lines) != 1 || !strings.Contains(lines[0], "xxhash64 of its first") || !strings.Contains(lines[0], "checkpoint") {
		t.Fatalf("inspect --verify of the killed crawl: exit %d, stderr %q; want 0 and %s checked against its checkpoint:\n%s", code, errs, seg, out)
	}
	orig, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	crawltest.FlipURL(t, seg)
	refusedWith(t, 2, seg, "inspect", "--verify", dir)
	refusedWith(t, 2, seg, "crawl", "-o", dir, "--resume")

	// Undamaged again, it resumes (for 2 s: a clean stop writes the
	// manifest), and every segment of both runs (the one cut back at the
	// checkpoint too) verifies by its hash.
	if err := os.WriteFile(seg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--duration", "2s", "--progress", "never"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	m, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := len(m.NodeInfo[0].URLSegments) + len(m.NodeInfo[0].PageSegments)
	code, out, errs = runCLI(t, "inspect", "--verify", dir)
	if code != 0 || strings.Count(out, "size and xxhash64 OK") != n || n < 4 {
		t.Errorf("inspect --verify of the resumed crawl: exit %d, stderr %q; want 0 and the %d segments the manifest lists checked:\n%s", code, errs, n, out)
	}
}
