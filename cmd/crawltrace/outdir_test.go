package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/condense"
)

// refusal checks a one-line exit-2 refusal naming path and --force.
func refusal(t *testing.T, path string, args ...string) {
	t.Helper()
	code, _, errs := runCLI(t, args...)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, path) || !strings.Contains(errs, "--force") {
		t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s and --force", args, code, errs, path)
	}
}

// mustRun runs the CLI in-process and fails the test unless it exits 0;
// it returns the standard output.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// A replay rerun is refused; with --force the earlier run's outputs go,
// the full-vs-cross figure of a trace no longer replayed included.
func TestReplayRerunForce(t *testing.T) {
	dir := t.TempDir()
	cond := filepath.Join(dir, "cond")
	full, cross := filepath.Join(cond, "node-000.full.arrow"), filepath.Join(cond, "node-000.cross.arrow")
	mustRun(t, "gen-trace", "-o", full, "--requests", "3000", "--keys", "500")
	mustRun(t, "gen-trace", "-o", cross, "--requests", "1000", "--keys", "400")
	res := filepath.Join(dir, "res")
	mustRun(t, "replay", cond, "--policies", "lru", "--sizes", "1,16", "-o", res)
	fig := filepath.Join(res, "full-vs-cross-node-000.png")
	if _, err := os.Stat(fig); err != nil {
		t.Fatal(err)
	}
	refusal(t, res, "replay", full, "--policies", "lru", "--sizes", "1,16", "-o", res)
	mustRun(t, "replay", full, "--policies", "lru", "--sizes", "1,16", "-o", res, "--force")
	if _, err := os.Stat(fig); err == nil {
		t.Error("--force left the earlier run's full-vs-cross figure")
	}
	b, err := os.ReadFile(filepath.Join(res, "results.csv"))
	if err != nil || strings.Contains(string(b), "cross") {
		t.Errorf("results.csv after --force: %v\n%s", err, b)
	}
	// Slices share a directory; rerunning one is refused.
	tasks := filepath.Join(dir, "tasks")
	for _, task := range []string{"0/2", "1/2"} {
		mustRun(t, "replay", full, "--policies", "lru", "--sizes", "1,16", "--task", task, "-o", tasks)
	}
	refusal(t, tasks, "replay", full, "--policies", "lru", "--sizes", "1,16", "--task", "1/2", "-o", tasks)
	// Single-file outputs: an existing file is refused unless --force.
	refusal(t, full, "gen-trace", "-o", full)
	og := filepath.Join(dir, "t.oracleGeneral")
	mustRun(t, "export", full, "-o", og)
	refusal(t, og, "export", full, "-o", og)
	mustRun(t, "export", full, "-o", og, "--force")
}

// A non-empty directory the command did not write is refused by every
// command that writes a directory; import and condense reruns too.
func TestForeignAndRerunDirectories(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	raw, cond := filepath.Join(dir, "raw"), filepath.Join(dir, "cond")
	urls := filepath.Join("..", "..", "examples", "urls.txt")
	mustRun(t, "import", "urls", urls, "--nodes", "2", "-o", raw)
	mustRun(t, "condense", raw, "-o", cond)
	for _, args := range [][]string{
		{"import", "urls", urls, "-o", foreign},
		{"condense", raw, "-o", foreign},
		{"replay", cond, "--sizes", "1", "-o", foreign},
		{"scenario", "all", raw, "-o", foreign},
		{"demo", "-o", foreign},
		{"orders", "-o", foreign},
		{"replay", cond, "--sizes", "1", "-o", cond}, // condense's directory
		{"import", "urls", urls, "-o", raw},
		{"condense", raw, "-o", cond},
	} {
		path := foreign
		if args[len(args)-1] != foreign {
			path = args[len(args)-1]
		}
		refusal(t, path, args...)
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatal("a refused command touched the directory")
	}
	mustRun(t, "import", "urls", urls, "--nodes", "3", "-o", raw, "--force")
	out := mustRun(t, "condense", raw, "-o", cond, "--force")
	if !strings.Contains(out, "3 nodes") {
		t.Errorf("condense --force: %q", out)
	}
	if _, err := os.Stat(filepath.Join(cond, "node-002.full.arrow")); err != nil {
		t.Error(err)
	}
	// --force writes into a foreign directory and removes nothing of it.
	mustRun(t, "condense", raw, "-o", foreign, "--force")
	if _, err := os.Stat(filepath.Join(foreign, "notes.txt")); err != nil {
		t.Error("--force removed a file the command did not write")
	}
	// The demo too, and its listing survives it (so a killed demo can be
	// cleaned up by the next --force).
	demoDir := filepath.Join(dir, "demo-foreign")
	os.MkdirAll(demoDir, 0o755)
	os.WriteFile(filepath.Join(demoDir, "notes.txt"), []byte("mine"), 0o644)
	mustRun(t, "demo", "-o", demoDir, "--force", "--max-pages", "50", "--hosts", "5", "--no-plots", "--no-scenarios")
	if _, err := os.Stat(filepath.Join(demoDir, "notes.txt")); err != nil {
		t.Error("demo --force removed a file it did not write")
	}
	if ls, _ := filepath.Glob(filepath.Join(demoDir, ".crawltrace-outputs-demo*")); len(ls) != 1 {
		t.Errorf("demo's output listing: %v", ls)
	}
}

// The map and reduce tasks of a condense and their merge share one
// directory.
func TestCondenseShardsShareDirectory(t *testing.T) {
	dir := t.TempDir()
	raw, cond := filepath.Join(dir, "raw"), filepath.Join(dir, "cond")
	mustRun(t, "import", "urls", filepath.Join("..", "..", "examples", "urls.txt"), "--nodes", "3", "-o", raw)
	mustRun(t, "condense", raw, "-o", cond, "--shard", "0/2")
	mustRun(t, "condense", raw, "-o", cond, "--shard", "1/2")
	mustRun(t, "condense", "reduce", cond, "--shard", "0/2")
	mustRun(t, "condense", "reduce", cond, "--shard", "1/2")
	out := mustRun(t, "condense", "merge", cond, "-o", cond)
	if !strings.Contains(out, "no fingerprint collisions") {
		t.Errorf("merge: %q", out)
	}
	refusal(t, cond, "condense", raw, "-o", cond, "--shard", "1/2")
	refusal(t, cond, "condense", "merge", cond, "-o", cond)
	mustRun(t, "condense", raw, "-o", cond, "--shard", "1/2", "--force")
	refusal(t, cond, "condense", "reduce", cond, "--shard", "0/2")
	for _, f := range []string{"node-000.full.arrow", "node-001.full.arrow", "node-002.full.arrow", "map-0-of-2.json", "map-1-of-2.json", "report-shard-0-of-2.json", "report-shard-1-of-2.json"} {
		if _, err := os.Stat(filepath.Join(cond, f)); err != nil {
			t.Error(err)
		}
	}
}

// A map task run again (--force, as a retried cluster task) replaces only
// its own buckets: the merged result still equals an unsharded run's.
func TestCondenseShardRerunKeepsOtherBuckets(t *testing.T) {
	dir := t.TempDir()
	raw, cond, whole := filepath.Join(dir, "raw"), filepath.Join(dir, "cond"), filepath.Join(dir, "whole")
	mustRun(t, "import", "urls", filepath.Join("..", "..", "examples", "urls.txt"), "--nodes", "3", "-o", raw)
	mustRun(t, "condense", raw, "-o", whole)
	mustRun(t, "condense", raw, "-o", cond, "--shard", "0/2")
	mustRun(t, "condense", raw, "-o", cond, "--shard", "1/2")
	mustRun(t, "condense", raw, "-o", cond, "--shard", "1/2", "--force")
	if _, err := os.Stat(condense.MapBucketDir(cond, 0)); err != nil {
		t.Fatalf("map task 0's buckets after map task 1 ran again: %v", err)
	}
	mustRun(t, "condense", "reduce", cond, "--shard", "0/2")
	mustRun(t, "condense", "reduce", cond, "--shard", "1/2")
	mustRun(t, "condense", "merge", cond, "-o", cond)
	distinct := func(d string) int64 {
		var r condense.Report
		b, err := os.ReadFile(filepath.Join(d, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r.Total.DistinctURLs
	}
	if got, want := distinct(cond), distinct(whole); got != want || want == 0 {
		t.Errorf("merged after a rerun: %d distinct URLs, unsharded %d", got, want)
	}
}
