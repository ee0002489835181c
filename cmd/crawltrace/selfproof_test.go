package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/fliptest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Issue 32, cases 2 and 6: a resume refuses, with exit 2 and one line
// naming the file, a state file that does not prove itself, and writes
// nothing before it: config.json with "MinDelay" garbled to "MinDeley"
// (before: accepted, the crawl resumed with no delay and config.json was
// rewritten so), an epoch of "xx" (before: exit 1, after config.json was
// rewritten), a topology.json whose node_id went from 0 to 4.
func TestResumeRefusesDamagedStateFiles(t *testing.T) {
	srv, seeds := resumeWeb(t)
	base := t.TempDir()
	if code, _, errs := runCLI(t, crawlArgs(base, srv.Addr(), seeds, "--max-pages", "10")...); code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, errs)
	}
	for _, tc := range []struct {
		file     string
		from, to string // one change; from "" replaces the whole file by to
	}{
		{"config.json", `"MinDelay"`, `"MinDeley"`},
		{"epoch", "", "xx\n"},
		{"topology.json", `"node_id": 0`, `"node_id": 4`},
	} {
		// Each case on a copy of the crawl, so that each fails alone on a
		// build without the check.
		dir := filepath.Join(t.TempDir(), "crawl")
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(tracefile.NodeDir(dir, 0), "state", tc.file)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		bad := []byte(tc.to)
		if tc.from != "" {
			if !bytes.Contains(good, []byte(tc.from)) {
				t.Fatalf("%s holds no %s", tc.file, tc.from)
			}
			bad = bytes.Replace(good, []byte(tc.from), []byte(tc.to), 1)
		}
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		before := dirState(t, dir)
		code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--max-pages", "40")
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, path) {
			t.Errorf("%s changed: resume exit %d, stderr %q; want 2 and one line naming %s", tc.file, code, errs, path)
		}
		after := dirState(t, dir)
		for p, st := range after {
			if before[p] != st {
				t.Errorf("%s changed: the refused resume wrote %s", tc.file, p)
			}
		}
		if len(after) != len(before) {
			t.Errorf("%s changed: %d files before the resume, %d after", tc.file, len(before), len(after))
		}
		os.WriteFile(path, good, 0o644)
		if code, _, errs := runCLI(t, "crawl", "-o", dir, "--resume", "--max-pages", "20"); code != 0 {
			t.Errorf("%s repaired: resume exit %d: %s", tc.file, code, errs)
		}
	}
}

// Issue 32, cases 3, 4 and 5 through the commands: one bit flipped in
// the schema metadata of a condensed trace or of replay's results.arrow,
// or manifest.json's nodes changed, is refused with exit 2 naming the
// file by inspect --verify, by export --format parquet, and by replay
// or condense. Before, all of them exited 0.
func TestCommandsRefuseFlippedMetadata(t *testing.T) {
	dir := t.TempDir()
	crawl, cond, res := filepath.Join(dir, "crawl"), filepath.Join(dir, "cond"), filepath.Join(dir, "res")
	if code, _, errs := runCLI(t, "import", "urls", "../../examples/urls.txt", "--crawl-id", "crawl-9", "-o", crawl); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "condense", crawl, "-o", cond); code != 0 {
		t.Fatalf("condense: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "replay", cond, "--policies", "lru", "--sizes", "4,16", "--no-plots", "-o", res, "--progress", "never"); code != 0 {
		t.Fatalf("replay: %d %s", code, errs)
	}
	refused := func(what, path string, args ...string) {
		t.Helper()
		code, _, errs := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, path) {
			t.Errorf("%s: %s: exit %d, stderr %q; want 2 and one line naming %s", what, strings.Join(args[:2], " "), code, errs, path)
		}
	}
	trace := filepath.Join(cond, "node-000.full.arrow")
	restore := fliptest.Last(t, trace, "crawl-9", 0) // in the footer's schema metadata
	refused("condensed trace's crawl id flipped", trace, "inspect", "--verify", trace)
	refused("condensed trace's crawl id flipped", trace, "export", trace, "--format", "parquet", "-o", filepath.Join(dir, "t.parquet"))
	refused("condensed trace's crawl id flipped", trace, "replay", trace, "--policies", "lru", "--sizes", "4", "--no-plots", "-o", filepath.Join(dir, "r2"), "--progress", "never")
	restore()

	table := filepath.Join(res, "results.arrow")
	restore = fliptest.Last(t, table, "crawl-9", 0)
	refused("results.arrow's crawl id flipped", table, "inspect", "--verify", table)
	refused("results.arrow's crawl id flipped", table, "export", table, "--format", "parquet", "-o", filepath.Join(dir, "r.parquet"))
	restore()

	man := filepath.Join(crawl, tracefile.ManifestName)
	good, _ := os.ReadFile(man)
	if !bytes.Contains(good, []byte(`"nodes": 1,`)) {
		t.Fatalf("%s holds no nodes 1", man)
	}
	os.WriteFile(man, bytes.Replace(good, []byte(`"nodes": 1,`), []byte(`"nodes": 5,`), 1), 0o644)
	restore = func() { os.WriteFile(man, good, 0o644) }
	refused("manifest.json's nodes changed", man, "inspect", "--verify", crawl)
	refused("manifest.json's nodes changed", man, "condense", crawl, "-o", filepath.Join(dir, "cond2"))
	restore()
	if code, _, errs := runCLI(t, "inspect", "--verify", crawl); code != 0 {
		t.Errorf("inspect --verify of the restored crawl: %d %s", code, errs)
	}
}

// Issue 32, case 6: a Parquet export of a directory killed midway (here
// once its second file is being written) leaves no *.parquet file for a
// reader that globs them, and no _SUCCESS. Before, the first file was in
// place beside the second's temporary file: half an export.
func TestExportKilledLeavesNoParquet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an export process")
	}
	dir := t.TempDir()
	cond, out := filepath.Join(dir, "cond"), filepath.Join(dir, "pq")
	for _, name := range []string{"a", "b", "c"} {
		if code, _, errs := runCLI(t, "gen-trace", "-o", filepath.Join(cond, name+".arrow"), "--requests", "1000000", "--keys", "500000", "--progress", "never"); code != 0 {
			t.Fatalf("gen-trace: %d %s", code, errs)
		}
	}
	p := startProc(t, filepath.Join(dir, "export.log"), "export", cond, "--format", "parquet", "-o", out)
	second := false
	for !second {
		select {
		case <-p.done:
			t.Fatalf("the export ended (%v) before its second file was started: make the traces larger", p.err)
		case <-time.After(time.Millisecond):
		}
		ents, _ := os.ReadDir(out)
		n := 0
		for _, e := range ents {
			if strings.Contains(e.Name(), ".parquet") {
				n++
			}
		}
		second = n >= 2
	}
	p.cmd.Process.Kill()
	<-p.done
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".parquet") || e.Name() == "_SUCCESS" {
			t.Errorf("killed export left %s in place", e.Name())
		}
	}
}
