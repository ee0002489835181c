package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{
		"1048576": 1 << 20, "512K": 512 << 10, "20G": 20 << 30, "20GiB": 20 << 30, "20gb": 20 << 30,
		"1.5G": 3 << 29, "2T": 2 << 40, " 64M ": 64 << 20, "0": 0,
	} {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "G", "-1G", "abc", "12X", "1 G", "NaN", "1e300T"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q): no error", s)
		}
	}
}

// distinctKeys' sketch is within 3% of the exact count, on fingerprints
// and on the small integers of a text trace.
func TestDistinctKeys(t *testing.T) {
	dir := t.TempDir()
	cfg := GenConfig{Requests: 1_000_000, Keys: 400_000, Alpha: 0.6, Locality: 0.2, Window: 16, Seed: 5}
	path, keys := genTraceKeys(t, dir, "d.arrow", cfg)
	exact := map[uint64]bool{}
	for _, k := range keys {
		exact[k] = true
	}
	var b strings.Builder
	for i := range 200_000 {
		b.WriteString(strconv.Itoa(i*7919%30_011) + "\n") // 30,011 distinct
	}
	text := filepath.Join(dir, "d.txt")
	if err := os.WriteFile(text, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, format string
		reqs, want   int64
	}{
		{path, FormatCondensed, cfg.Requests, int64(len(exact))},
		{text, FormatText, 200_000, 30_011},
	} {
		reqs, d, err := distinctKeys(context.Background(), tc.path, tc.format)
		if err != nil {
			t.Fatal(err)
		}
		if reqs != tc.reqs || d < tc.want*97/100 || d > tc.want*103/100 {
			t.Errorf("%s: %d requests, %d distinct; want %d, %d +- 3%%", tc.format, reqs, d, tc.reqs, tc.want)
		}
	}
}

// A run whose trace in memory alone exceeds the memory allowed is refused
// before it starts, with a one-line error naming the trace and the memory
// it needs; a cache far larger than the trace's distinct keys is counted
// at the keys it can hold, so a 2^25-entry grid over a small trace fits in
// little memory.
func TestMemoryCheck(t *testing.T) {
	t.Parallel() // CPU only, no package state
	dir := t.TempDir()
	const n = 2_000_000
	path := genTrace(t, dir, "m.arrow", GenConfig{Requests: n, Keys: 20_000, Alpha: 0.8, Locality: 0.3, Window: 32, Seed: 9})
	out := filepath.Join(dir, "out")
	// min in one pass holds the trace and its next-use times: 12 bytes a
	// request.
	cfg := Config{Traces: []string{path}, Policies: []string{"min", "lru"}, Sizes: PaperSizes(), Memory: 12 * n, OutDir: out}
	_, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("min over 2M requests ran within 24 MB")
	}
	msg := err.Error()
	if errors.Is(err, tracefile.ErrBadInput) || strings.Contains(msg, "\n") ||
		!strings.Contains(msg, "m.arrow: this run needs about") || !strings.Contains(msg, "22.9 MiB given by --memory") ||
		!strings.Contains(msg, "trace in memory 15.3 MiB") || !strings.Contains(msg, "next-use times 7.6 MiB") {
		t.Errorf("error %q", msg)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote %s (%v)", out, err)
	}
	// Sampled, min holds a sample of the trace only.
	cfg.Sample, cfg.Memory = 0.01, 48<<20
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Errorf("sampled: %v", err)
	}
	// Caches of 2^25 keys over 20,000 keys: counted at nominal size (about
	// 1.5 GiB for lru alone) they would not fit in 128 MiB, nor at 2M keys
	// (the requests' bound, before the pass that counts them).
	cfg = Config{Traces: []string{path}, Policies: []string{"lru", "clock", "arc", "infinite"}, Sizes: []int{1 << 10, 1 << 25}, Memory: 128 << 20}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Errorf("small trace, large sizes: %v", err)
	}
	// Off: no check.
	cfg = Config{Traces: []string{path}, Policies: []string{"min"}, Sizes: []int{16}, Memory: -1}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Errorf("--memory off: %v", err)
	}
}

// static in one pass streams the trace: the memory check counts its table
// of distinct keys, not the trace in memory that its runs per size need.
func TestMemoryCheckStaticCurve(t *testing.T) {
	const n = 1_000_000
	path := genTrace(t, t.TempDir(), "s.arrow", GenConfig{Requests: n, Keys: 10_000, Alpha: 0.8, Locality: 0.3, Window: 32, Seed: 4})
	// The program's 32 MiB plus the trace in memory (7.6 MiB) exceed 38
	// MiB; the curve's table of some 10,000 keys does not.
	cfg := Config{Traces: []string{path}, Policies: []string{"static"}, Sizes: []int{16, 256, 4096, 65536}, Memory: 38 << 20}
	cfg.Algorithm = AlgorithmPerSize
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "trace in memory 7.6 MiB") {
		t.Errorf("static per size within 38 MiB: %v", err)
	}
	cfg.Algorithm = AlgorithmOnePass
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Errorf("static in one pass: %v", err)
	}
	p, err := newPlan(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	need := p.estimateTrace("s.arrow", p.units, n, 10_000)
	for _, p := range need.parts {
		if strings.Contains(p.what, "trace") {
			t.Errorf("static in one pass counts %s %d", p.what, p.bytes)
		}
	}
	// 1.5 x (a table of 32,768 16-byte slots + 24 bytes a key).
	if got, want := need.total(), int64(baseBytes+1.5*(32768*16+24*10_000)); got != want {
		t.Errorf("static in one pass: estimate %d, want %d (%s)", got, want, need)
	}
}
