package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplayCLI(t *testing.T) {
	dir := t.TempDir()
	cond := filepath.Join(dir, "cond")
	var out, errb bytes.Buffer
	run := func(args ...string) int {
		out.Reset()
		errb.Reset()
		return runWith(args, &out, &errb)
	}
	if code := run("gen-trace", "-o", filepath.Join(cond, "node-000.full.arrow"), "--requests", "20000", "--keys", "2000", "--trace-seed", "3"); code != 0 {
		t.Fatalf("gen-trace: exit %d: %s", code, errb.String())
	}
	if code := run("gen-trace", "-o", filepath.Join(cond, "node-000.cross.arrow"), "--requests", "5000", "--keys", "1500", "--locality", "0"); code != 0 {
		t.Fatalf("gen-trace: exit %d: %s", code, errb.String())
	}
	res := filepath.Join(dir, "res")
	if code := run("replay", cond, "--sizes", "1,16,256,4k", "--random-runs", "2", "-o", res, "--progress", "never"); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"node-000.full.arrow: miss rate %", "infinite", "min", "static", "4K", "wrote " + filepath.Join(res, "results.csv"), "full-vs-cross-node-000.png"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("replay output lacks %q:\n%s", want, out.String())
		}
	}
	if errb.Len() != 0 {
		t.Errorf("--progress never, want no progress: %q", errb.String())
	}
	// Sliced, then merged: same CSV apart from timings.
	tasks := filepath.Join(dir, "tasks")
	for i := range 3 {
		if code := run("replay", cond, "--sizes", "1,16,256,4k", "--random-runs", "2", "--task", string(rune('0'+i))+"/3", "-o", tasks); code != 0 {
			t.Fatalf("replay --task: exit %d: %s", code, errb.String())
		}
	}
	merged := filepath.Join(dir, "merged")
	if code := run("replay", "merge", tasks, "-o", merged, "--no-plots"); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb.String())
	}
	a, _ := os.ReadFile(filepath.Join(res, "results.csv"))
	b, _ := os.ReadFile(filepath.Join(merged, "results.csv"))
	if noSeconds(string(a)) != noSeconds(string(b)) || len(a) == 0 {
		t.Errorf("merged results differ:\n%s\nvs\n%s", a, b)
	}
	// Export and replay the oracleGeneral file.
	og := filepath.Join(dir, "t.oracleGeneral")
	if code := run("export", filepath.Join(cond, "node-000.cross.arrow"), "-o", og); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errb.String())
	}
	if code := run("replay", og, "--in-format", "oracleGeneral", "--policies", "lru,min", "--sizes", "16", "--no-plots", "-o", filepath.Join(dir, "og")); code != 0 {
		t.Fatalf("replay oracleGeneral: exit %d: %s", code, errb.String())
	}
	// Bad input: exit 2 and one line naming the file.
	bad := filepath.Join(dir, "bad.og")
	os.WriteFile(bad, []byte("short"), 0o644)
	if code := run("replay", bad, "--in-format", "oracleGeneral", "-o", filepath.Join(dir, "x")); code != 2 || !strings.Contains(errb.String(), bad) || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("bad trace: exit %d, stderr %q", code, errb.String())
	}
	// A sampled replay: rows carry the rate.
	sres := filepath.Join(dir, "sampled")
	if code := run("replay", filepath.Join(cond, "node-000.full.arrow"), "--sample", "0.25", "--policies", "lru,clock", "--sizes", "16,256", "--no-plots", "-o", sres); code != 0 {
		t.Fatalf("replay --sample: exit %d: %s", code, errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(sres, "results.csv")); strings.Count(string(b), ",0.25\n") != 4 {
		t.Errorf("sampled results.csv:\n%s", b)
	}
	for _, args := range [][]string{
		{"replay", og, "--sample", "2"},
		{"replay", og, "--sample", "0.1", "--warmup", "5"},
		{"replay", og, "--sample-max-keys", "-1"},
		{"replay", og, "--algorithm", "fast"},
		{"replay", og, "--sizes", "zero"},
		{"replay", og, "--task", "3/3"},
		{"replay", og, "--policies", "nosuch"},
		{"gen-trace", "-o", filepath.Join(dir, "g.arrow"), "--alpha", "-1"},
	} {
		if code := run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

// noSeconds drops the seconds column (9th) of a results CSV.
func noSeconds(csv string) string {
	var b strings.Builder
	for _, line := range strings.Split(csv, "\n") {
		f := strings.Split(line, ",")
		if len(f) > 8 {
			f = append(f[:8], f[9:]...)
		}
		b.WriteString(strings.Join(f, ",") + "\n")
	}
	return b.String()
}

// A run that cannot fit in --memory is refused before it starts: exit 1,
// one line naming the memory needed, no output directory; a bad --memory
// is a usage error; --memory off runs it.
func TestReplayMemoryFlag(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.arrow")
	mustRun(t, "gen-trace", "-o", tr, "--requests", "500000", "--keys", "5000")
	out := filepath.Join(dir, "out")
	code, _, errs := runCLI(t, "replay", tr, "--policies", "min", "--sizes", "16,1k", "--memory", "4M", "-o", out, "--progress", "never")
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "t.arrow: this run needs about") ||
		!strings.Contains(errs, "trace in memory 3.8 MiB") || !strings.Contains(errs, "4.0 MiB given by --memory") {
		t.Errorf("--memory 4M: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused run left %s (%v)", out, err)
	}
	for _, bad := range []string{"lots", "0", "-3G"} {
		code, _, errs = runCLI(t, "replay", tr, "--memory", bad, "-o", out)
		if code != 2 || !strings.Contains(errs, "--memory") || strings.Count(errs, "\n") != 1 {
			t.Errorf("--memory %s: exit %d, stderr %q", bad, code, errs)
		}
	}
	for _, ok := range []string{"off", "2G", "auto"} {
		if code, _, errs = runCLI(t, "replay", tr, "--policies", "min", "--sizes", "16,1k", "--memory", ok, "--no-plots", "--force", "-o", out, "--progress", "never"); code != 0 {
			t.Errorf("--memory %s: exit %d, stderr %q", ok, code, errs)
		}
	}
}
