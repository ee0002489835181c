package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
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
	refusedWith(t, 2, bad, "export", bad, "-o", filepath.Join(dir, "x.oracleGeneral"))
	refusedWith(t, 2, bad, "export", bad, "--format", "text", "-o", filepath.Join(dir, "x.txt"))

	// Random flips anywhere (60; 10 with -short): inspect and inspect
	// --verify refuse the file with one line or read it, never a panic.
	rng := rand.New(rand.NewPCG(21, 8))
	flipped := filepath.Join(dir, "flip.arrow")
	orig, _ := os.ReadFile(good)
	flips := 60 // as in the report
	if testing.Short() {
		flips = 10
	}
	for range flips {
		b := append([]byte(nil), orig...)
		i := rng.IntN(len(b))
		b[i] ^= byte(1 + rng.IntN(255))
		os.WriteFile(flipped, b, 0o644)
		for _, args := range [][]string{{"inspect", flipped}, {"inspect", "--verify", flipped}} {
			code, _, errs := runCLI(t, args...)
			if (code != 0 && code != 2) || strings.Contains(errs, "panic") {
				t.Fatalf("flip at %d: %v: exit %d: %s", i, args, code, errs)
			}
		}
	}
	// As many random flips in the fingerprints (the first batch's body, found
	// by its first values): inspect --verify refuses each one, exit 2,
	// naming the file; replay too (checked on a few: it reads the trace
	// in full).
	fps, _, err := tracefile.ReadCondensedAll(good)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 64)
	for i := range 64 { // the first 8 fingerprints, little-endian
		head[i] = byte(fps[i/8] >> (8 * (i % 8)))
	}
	body := bytes.Index(orig, head)
	if body < 0 {
		t.Fatal("fingerprints not found in the trace")
	}
	for k := range flips {
		b := append([]byte(nil), orig...)
		i := body + rng.IntN(8*tracefile.CondensedBatchRows)
		b[i] ^= byte(1 + rng.IntN(255))
		os.WriteFile(flipped, b, 0o644)
		refusedWith(t, 2, flipped, "inspect", "--verify", flipped)
		if k < 3 {
			refusedWith(t, 2, flipped, "replay", flipped, "--policies", "lru", "--sizes", "16", "--no-plots", "--progress", "never",
				"-o", filepath.Join(dir, fmt.Sprintf("res-%d", k)))
		}
	}
	if code, out, errs := runCLI(t, "inspect", "--verify", good); code != 0 || !strings.Contains(out, "checksum OK") {
		t.Errorf("inspect --verify of the good trace: exit %d, %q %q", code, out, errs)
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
	refusedWith(t, 2, missing, "export", missing, "-o", filepath.Join(dir, "x.oracleGeneral"))
	refusedWith(t, 2, missing, "export", missing, "--in-format", "text", "-o", filepath.Join(dir, "y.oracleGeneral"))

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

// scenario reads a crawl as condense does: a URL segment cut in half (a
// truncated copy: fewer rows than manifest.json records) is the same
// warning from both, and --strict refuses it in both, exit 2.
func TestScenarioCutSegmentWarns(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "crawl")
	// Enough URLs for several batches (the importer flushes every 64Ki rows).
	var sb strings.Builder
	for i := range 150000 {
		fmt.Fprintf(&sb, "http://h%d.test/p/%d\n", i%97, i)
	}
	urls := filepath.Join(dir, "urls.txt")
	os.WriteFile(urls, []byte(sb.String()), 0o644)
	mustRun(t, "import", "urls", urls, "-o", crawl)
	seg := filepath.Join(tracefile.NodeDir(crawl, 0), tracefile.SegmentName(tracefile.PrefixURLs, 1))
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seg, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, condErr := runCLI(t, "condense", crawl, "-o", filepath.Join(dir, "cond"), "--progress", "never")
	if code != 0 || !strings.Contains(condErr, "warning: cut segment "+seg) {
		t.Fatalf("condense: exit %d, stderr %q", code, condErr)
	}
	warnings := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "warning: cut segment") {
				out = append(out, l)
			}
		}
		return out
	}
	for _, q := range [][]string{{"all"}, {"partition"}, {"splitter-cache"}, {"threads"}, {"node-loss", "--event", "add"}, {"locality"}} {
		args := append([]string{"scenario", q[0], crawl, "--no-plots", "--progress", "never"}, q[1:]...)
		code, _, errs := runCLI(t, append(args, "-o", filepath.Join(dir, "s-"+q[0]))...)
		if code != 0 || !slices.Equal(warnings(errs), warnings(condErr)) {
			t.Errorf("scenario %s: exit %d, stderr %q; want exit 0 and condense's warnings %q", q[0], code, errs, warnings(condErr))
		}
		refusedWith(t, 2, seg, append(args, "--strict", "-o", filepath.Join(dir, "strict-"+q[0]))...)
	}
	refusedWith(t, 2, seg, "condense", crawl, "--strict", "-o", filepath.Join(dir, "cond-strict"))
}

// SIGINT stops a replay promptly: a child replay sized to take far longer
// than the test's 10 s bound (STATIC, which counts the whole trace before
// each of its runs, and CLOCK at 120 sizes over 4M requests), sent SIGINT
// once it has the trace mapped, exits 130 without finishing (no
// results.csv). The simulation loops and whole-trace passes look at the
// cancellation every 64Ki requests, and no unit starts after it.
func TestReplaySIGINTStopsPromptly(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a 4M-request trace in a child process")
	}
	if _, err := os.Stat("/proc/self/maps"); err != nil {
		t.Skip("needs /proc to see the trace mapped")
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "big.arrow")
	mustRun(t, "gen-trace", "-o", trace, "--requests", "4000000", "--keys", "1000000")
	out := filepath.Join(dir, "res")
	sizes := make([]string, 120)
	for i := range sizes {
		sizes[i] = strconv.Itoa(1000 + 97*i)
	}
	cmd := crawltest.Command(cliChild, "replay", trace, "--policies", "min,static,clock", "--sizes", strings.Join(sizes, ","),
		"--jobs", "2", "--no-plots", "--progress", "never", "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The run has begun (its signal handler is in place) once the trace is
	// mapped.
	maps := fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid)
	for {
		b, err := os.ReadFile(maps)
		if err != nil {
			t.Fatalf("the replay ended before mapping its trace: %v\n%s", <-done, stderr.String())
		}
		if bytes.Contains(b, []byte(trace)) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the replay ended before mapping its trace: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		if code := exitStatus(t, err); code != 130 {
			t.Errorf("exit %d after SIGINT, want 130; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the replay did not stop within 10 s of SIGINT; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted by SIGINT") {
		t.Errorf("stderr lacks the interruption:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "results.csv")); err == nil {
		t.Error("the interrupted replay wrote results.csv: it ran to the end")
	}
}

// replay merge of two slices cut from runs with other parameters: exit 2,
// one line naming both slices.
func TestReplayMergeRefusesMixedSlices(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.arrow")
	mustRun(t, "gen-trace", "-o", trace, "--requests", "3000", "--keys", "500")
	tasks := filepath.Join(dir, "tasks")
	mustRun(t, "replay", trace, "--policies", "lru", "--sizes", "1,16", "--task", "0/2", "--no-plots", "-o", tasks)
	mustRun(t, "replay", trace, "--policies", "lru", "--sizes", "1,64", "--task", "1/2", "--no-plots", "-o", tasks)
	code, _, errs := runCLI(t, "replay", "merge", tasks, "-o", filepath.Join(dir, "merged"))
	for _, want := range []string{"results-task-0-of-2.csv", "results-task-1-of-2.csv", "parameter sizes"} {
		if code != 2 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("merge: exit %d, stderr %q; want 2 and one line naming %s", code, errs, want)
		}
	}
}
