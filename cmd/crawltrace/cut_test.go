package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// A 0-byte segment (a writer killed right after creating it) is reported
// as cut and the rest of the crawl is condensed; --strict refuses it.
func TestCondenseZeroByteSegment(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "crawl")
	if code, _, errs := runCLI(t, "import", "urls", "../../examples/urls.txt", "-o", crawl); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	empty := filepath.Join(tracefile.NodeDir(crawl, 0), tracefile.SegmentName(tracefile.PrefixURLs, 2))
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "condense", crawl, "-o", filepath.Join(dir, "c1"))
	if code != 0 || !strings.Contains(out, "condensed 300 URLs") {
		t.Fatalf("condense: exit %d, %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "cut segment "+empty) || !strings.Contains(errs, "recovered 0 rows") {
		t.Errorf("stderr %q: want the 0-byte segment reported as cut", errs)
	}
	code, _, errs = runCLI(t, "condense", crawl, "-o", filepath.Join(dir, "c2"), "--strict")
	if code != 2 || !strings.Contains(errs, empty) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("--strict: exit %d, stderr %q: want 2 and one line naming the file", code, errs)
	}
}
