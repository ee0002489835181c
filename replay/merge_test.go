package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Task slices cut from different runs (other traces, other parameters, a
// regenerated trace) are refused, naming both slices and what differs:
// each slice's .json records its run. Slices of one run still merge.
func TestMergeRefusesSlicesOfDifferentRuns(t *testing.T) {
	dir := t.TempDir()
	a := genTrace(t, dir, "a/node-000.full.arrow", smallGen(3))
	b := genTrace(t, dir, "b/node-000.full.arrow", smallGen(4))
	base := DefaultConfig()
	base.Policies = []string{"lru", "fifo"}
	base.Sizes = []int{4, 64}
	base.Plots = false
	slice := func(out string, i int, change func(*Config)) {
		cfg := base
		cfg.Traces = []string{a}
		cfg.Task, cfg.Tasks, cfg.OutDir = i, 2, out
		if change != nil {
			change(&cfg)
		}
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	// One run: merges.
	same := filepath.Join(dir, "same")
	slice(same, 0, nil)
	slice(same, 1, nil)
	if _, err := Merge([]string{same}, "", false); err != nil {
		t.Fatalf("slices of one run: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"inputs", func(c *Config) { c.Traces = []string{b} }, "inputs"},
		{"sizes", func(c *Config) { c.Sizes = []int{4, 16} }, "parameter sizes"},
		{"policies", func(c *Config) { c.Policies = []string{"lru", "clock"} }, "parameter policies"},
	} {
		out := filepath.Join(dir, tc.name)
		slice(out, 0, nil)
		slice(out, 1, tc.change)
		_, err := Merge([]string{out}, filepath.Join(dir, "merged-"+tc.name), false)
		s0, s1 := filepath.Join(out, TaskFileName(0, 2)), filepath.Join(out, TaskFileName(1, 2))
		if !errors.Is(err, tracefile.ErrBadInput) || !strings.Contains(err.Error(), s0) || !strings.Contains(err.Error(), s1) ||
			!strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: merge error %v; want bad input naming %s, %s and %q", tc.name, err, s0, s1, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "merged-"+tc.name, "results.csv")); err == nil {
			t.Errorf("%s: the refused merge wrote results.csv", tc.name)
		}
	}
	// The same path, regenerated alike between the slices: another file.
	regen := filepath.Join(dir, "regen")
	slice(regen, 0, nil)
	g := smallGen(3)
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	genTrace(t, dir, "a/node-000.full.arrow", g)
	slice(regen, 1, nil)
	if _, err := Merge([]string{regen}, "", false); err == nil || !strings.Contains(err.Error(), "trace node-000.full.arrow") {
		t.Errorf("regenerated trace: merge error %v", err)
	}
	// A slice without its .json cannot be checked.
	os.Remove(filepath.Join(same, "results-task-1-of-2.json"))
	if _, err := Merge([]string{same}, "", false); !errors.Is(err, tracefile.ErrBadInput) || !strings.Contains(err.Error(), "results-task-1-of-2.json") {
		t.Errorf("slice without metadata: %v", err)
	}
}
