package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refusedWith fails t unless the run exited with want and wrote one line on
// stderr naming path (and no panic).
func refusedWith(t *testing.T, want int, path string, args ...string) {
	t.Helper()
	code, _, errs := runCLI(t, args...)
	errs = strings.TrimSpace(errs)
	if code != want || strings.Contains(errs, "\n") || !strings.Contains(errs, path) || strings.Contains(errs, "panic") {
		t.Errorf("%s: exit %d, stderr %q; want %d and one line naming %s", strings.Join(args, " "), code, errs, want, path)
	}
}

// The report's damaged trace: gen-trace, then b[len(b)-342] ^= 88 (a
// byte of a key-value of the footer's schema). inspect, replay and export
// panicked inside flatbuffers; they now refuse the file, exit 2.
func TestDamagedTraceFooter(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "r.arrow")
	mustRun(t, "gen-trace", "-o", good, "--requests", "600000", "--keys", "5000")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-342] ^= 88
	bad := filepath.Join(dir, "bad.arrow")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	refusedWith(t, 2, bad, "inspect", bad)
	refusedWith(t, 2, bad, "replay", bad, "--policies", "lru", "--sizes", "16", "--no-plots", "--progress", "never", "-o", filepath.Join(dir, "res"))
	refusedWith(t, 2, bad, "export", bad, "-o", filepath.Join(dir, "x.og"))
	refusedWith(t, 2, bad, "export", bad, "--format", "text", "-o", filepath.Join(dir, "x.txt"))

	// 60 random flips anywhere: each is refused with one line or read,
	// never a panic.
	rng := rand.New(rand.NewPCG(21, 8))
	flipped := filepath.Join(dir, "flip.arrow")
	for range 60 {
		b, _ := os.ReadFile(good)
		i := rng.IntN(len(b))
		b[i] ^= byte(1 + rng.IntN(255))
		os.WriteFile(flipped, b, 0o644)
		code, _, errs := runCLI(t, "inspect", flipped)
		if (code != 0 && code != 2) || strings.Contains(errs, "panic") {
			t.Fatalf("flip at %d: inspect exit %d: %s", i, code, errs)
		}
	}
}

// Bad paths are bad input (exit 2): a symlink loop given to condense and
// scenario, a missing trace to export, a directory to import heritrix, a
// non-empty directory that holds no crawl to crawl -o.
func TestBadPathsExit2(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	os.Symlink(filepath.Join(dir, "loop2"), loop)
	os.Symlink(loop, filepath.Join(dir, "loop2"))
	refusedWith(t, 2, loop, "condense", loop, "-o", filepath.Join(dir, "c"))
	refusedWith(t, 2, loop, "scenario", "all", loop, "--no-plots", "-o", filepath.Join(dir, "s"))
	// A crawl whose segment is a symlink loop.
	crawl := filepath.Join(dir, "crawl")
	os.MkdirAll(filepath.Join(crawl, "node-000"), 0o755)
	seg := filepath.Join(crawl, "node-000", "urls-000001.arrows")
	os.Symlink(seg, seg)
	refusedWith(t, 2, seg, "condense", crawl, "-o", filepath.Join(dir, "c2"))

	missing := filepath.Join(dir, "missing.arrow")
	refusedWith(t, 2, missing, "export", missing, "-o", filepath.Join(dir, "x.og"))
	refusedWith(t, 2, missing, "export", missing, "--in-format", "text", "-o", filepath.Join(dir, "y.og"))

	logs := filepath.Join(dir, "logs")
	os.Mkdir(logs, 0o755)
	refusedWith(t, 2, logs, "import", "heritrix", logs, "-o", filepath.Join(dir, "imp"))

	foreign := filepath.Join(dir, "foreign")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	refusedWith(t, 2, foreign, "crawl", "-o", foreign, "http://a.test/")
	if ents, _ := os.ReadDir(foreign); len(ents) != 1 {
		t.Errorf("the refused crawl wrote into %s: %d entries", foreign, len(ents))
	}
}
