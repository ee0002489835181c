package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/sampledata"
)

// fixtures of the importer package.
var importFixtures = filepath.Join("..", "..", "recorder", "importer", "testdata")

// Each format imports from the command line, condenses and replays.
func TestImportFormatsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		format, file string
		nodes        string
		out          []string // substrings of the import output
		condensed    string   // substring of the condense output
		replayRow    string   // a row of results.csv
	}{
		{"heritrix", "crawl.log", "2",
			[]string{"imported 9 URLs", "(2 nodes,", "3 records skipped", "5 bad lines", "crawl.log:11: first field is not a log timestamp"},
			"9 distinct URLs", ".full.arrow,infinite,16,9,0,9,"},
		{"warc", "small.warc.gz", "1",
			[]string{"imported 8 URLs", "5 records skipped", "small.warc.gz:12: content-encoding: unsupported coding \"compress\""},
			"8 distinct URLs", "node-000.full.arrow,infinite,16,8,0,8,"},
		{"wat", "small.wat.gz", "1",
			[]string{"imported 9 URLs", "3 records skipped", "small.wat.gz:5: WAT JSON"},
			"8 distinct URLs", "node-000.full.arrow,infinite,16,9,1,8,"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			raw, cond, res := filepath.Join(dir, "raw"), filepath.Join(dir, "cond"), filepath.Join(dir, "res")
			code, out, errs := runCLI(t, "import", tc.format, filepath.Join(importFixtures, tc.file), "--nodes", tc.nodes, "-o", raw)
			if code != 0 {
				t.Fatalf("import: exit %d: %s %s", code, out, errs)
			}
			for _, want := range tc.out {
				if !strings.Contains(out, want) {
					t.Errorf("import output lacks %q:\n%s", want, out)
				}
			}
			code, out, errs = runCLI(t, "condense", raw, "-o", cond)
			if code != 0 || !strings.Contains(out, tc.condensed) {
				t.Fatalf("condense: exit %d: %s %s", code, out, errs)
			}
			code, out, errs = runCLI(t, "replay", cond, "--policies", "infinite,lru", "--sizes", "1,16", "--no-plots", "-o", res)
			if code != 0 {
				t.Fatalf("replay: exit %d: %s %s", code, out, errs)
			}
			csv, err := os.ReadFile(filepath.Join(res, "results.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(csv), tc.replayRow) {
				t.Errorf("results.csv lacks %q:\n%s", tc.replayRow, csv)
			}
		})
	}
}

// The real Common Crawl sample, when present: 253 links of one page.
func TestImportWARCWhirlwind(t *testing.T) {
	p := sampledata.Path(t, "warc", "whirlwind.warc.gz")
	code, out, errs := runCLI(t, "import", "warc", p, "-o", filepath.Join(t.TempDir(), "raw"))
	if code != 0 || !strings.Contains(out, "imported 253 URLs") || !strings.Contains(out, "3 records skipped") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
}

func TestImportFormatsBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("nothing to see\nat all\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "warc", filepath.Join(dir, "missing.warc"), "-o", filepath.Join(dir, "o1")}, "missing.warc"},
		{[]string{"import", "heritrix", junk, "-o", filepath.Join(dir, "o2")}, "no URLs in " + junk},
		{[]string{"import", "warc", junk, "-o", filepath.Join(dir, "o3")}, "no URLs in " + junk},
		{[]string{"import", "wat", junk, "-o", filepath.Join(dir, "o4"), "--partitioner", "nope"}, "nope"},
		{[]string{"import", "wat"}, "import wat: needs at least 1 argument, got 0; usage: crawltrace import wat"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
}
