package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// gridChild is the child process of TestGridPeakMemory (see main_test.go):
// it replays the trace args[0] through the policies args[1] with one
// worker and prints its own peak RSS.
func gridChild(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "grid child: want TRACE POLICIES")
		return 2
	}
	cfg := DefaultConfig()
	cfg.Traces, cfg.Policies, cfg.Workers, cfg.Plots = []string{args[0]}, strings.Split(args[1], ","), 1, false
	if _, err := Run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("peak-rss %d\n", procmem.PeakRSS())
	return 0
}

// A grid holds no more than the simulation running now plus the trace:
// the 5-policy, 26-size grid on a 600K-request trace with one worker peaks
// at most at twice its largest single policy. Each run is a child process
// that reads its own VmHWM (the parent's rusage would include this test
// binary's peak).
func TestGridPeakMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a 600K-request trace through 5 policies at 26 sizes, twice")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads VmHWM")
	}
	t.Parallel() // what it measures is its child processes' peaks
	trace := filepath.Join(t.TempDir(), "t.arrow")
	gc := GenConfig{Requests: 600_000, Keys: 300_000, Alpha: 0.8, Locality: 0.3, Window: 64, Seed: 3}
	if err := GenerateFile(trace, gc); err != nil {
		t.Fatal(err)
	}
	// peak is the peak RSS of a child process replaying the grid of
	// policies; 0 where the kernel gives none.
	peak := func(policies string) (int64, error) {
		cmd := crawltest.Command(gridChildName, trace, policies)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%s: %v\n%s", policies, err, out)
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "peak-rss "); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					return 0, nil
				}
				return n, nil
			}
		}
		return 0, fmt.Errorf("%s: no peak-rss line in\n%s", policies, out)
	}
	// Each run is a process of its own, so the six run at once.
	policies := []string{"lru", "clock", "sieve", "s3fifo", "arc"}
	runs := append(slices.Clone(policies), strings.Join(policies, ","))
	peaks, errs := make([]int64, len(runs)), make([]error, len(runs))
	var wg sync.WaitGroup
	for i, p := range runs {
		wg.Go(func() { peaks[i], errs[i] = peak(p) })
	}
	wg.Wait()
	var largest int64
	for i, p := range runs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if peaks[i] == 0 {
			t.Skipf("%s: no peak RSS", p)
		}
		if i < len(policies) {
			t.Logf("%s alone: %d MiB", p, peaks[i]>>20)
			largest = max(largest, peaks[i])
		}
	}
	grid := peaks[len(policies)]
	t.Logf("grid: %d MiB; largest single policy %d MiB", grid>>20, largest>>20)
	if grid > 2*largest {
		t.Errorf("the grid peaks at %d MiB, more than twice its largest single policy (%d MiB)", grid>>20, largest>>20)
	}
}

// memory.csv reports what each simulation measured: a cache far larger
// than the trace's distinct keys holds them all and costs what they cost.
func TestMemoryCSVMeasured(t *testing.T) {
	dir := t.TempDir()
	gc := smallGen(5)
	trace := genTrace(t, dir, "t.arrow", gc)
	cfg := DefaultConfig()
	cfg.Traces, cfg.Policies, cfg.Sizes, cfg.Plots, cfg.OutDir = []string{trace}, []string{"clock", "sieve", "lru"}, []int{64, 1 << 22}, false, filepath.Join(dir, "out")
	cfg.Algorithm = AlgorithmOnePass
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	keys, err := ReadFile(trace, FormatCondensed)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[uint64]bool{}
	for _, k := range keys {
		distinct[k] = true
	}
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, "memory.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "policy,size,bytes_per_entry,keys_held,bytes,measured_bytes_per_entry" {
		t.Fatalf("memory.csv header %q", lines[0])
	}
	seen := 0
	for _, line := range lines[1:] {
		f := strings.Split(line, ",")
		switch {
		case f[0] == "lru":
			if f[3] != "" {
				t.Errorf("one-pass lru has measured columns: %s", line)
			}
		case f[1] == "64":
			if f[3] != "64" {
				t.Errorf("a full 64-key cache held %s keys: %s", f[3], line)
			}
		default:
			seen++
			if f[3] != strconv.Itoa(len(distinct)) {
				t.Errorf("%s at 2^22 held %s keys, the trace has %d distinct: %s", f[0], f[3], len(distinct), line)
			}
			// 24-byte slab nodes or 9-byte slots, plus a table of 16-byte
			// slots at load >= 1/4 and growth slack: far below the 2^22
			// keys' worth a preallocated cache would cost.
			if v, _ := strconv.ParseFloat(f[5], 64); !(v > 8 && v < 200) {
				t.Errorf("%s at 2^22: %s measured bytes per entry", f[0], f[5])
			}
		}
	}
	if seen != 2 {
		t.Errorf("memory.csv has %d measured 2^22 rows, want 2:\n%s", seen, b)
	}
}
