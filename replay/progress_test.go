package replay

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/progress"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// progressLine is a batch progress line of replay: requests done of the
// total, percentage, rate, the ETA while requests remain, runs done.
var progressLine = regexp.MustCompile(`^replay: [0-9hm]+s (\d+)/(\d+) requests \((\d+\.\d)%\), [0-9.kM]+ requests/s(, ETA [0-9hm]+s)?; (\d+)/(\d+) runs$`)

type progressPoint struct{ done, total, runs, units int64 }

// runProgress runs cfg with batch progress lines at every update, on a clock
// that advances a second per reading, and returns the lines' counts.
func runProgress(t *testing.T, cfg Config) []progressPoint {
	t.Helper()
	var mu sync.Mutex
	var b strings.Builder
	now := time.Unix(1_700_000_000, 0)
	cfg.Progress = &progress.Sink{W: &lockedWriter{mu: &mu, b: &b}, Every: -1, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	var pts []progressPoint
	for l := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		m := progressLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("progress line %q does not match %v", l, progressLine)
		}
		n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
		p := progressPoint{n(1), n(2), n(5), n(6)}
		if (m[4] != "") != (p.done < p.total) {
			t.Errorf("line %q: an ETA exactly while requests remain", l)
		}
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		t.Fatal("no progress lines")
	}
	return pts
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Progress counts requests of the whole grid against a total known before
// the first run (each run's passes over its trace), advances within a run,
// never goes back, and ends at the total with every run done.
func TestProgressRequestsETA(t *testing.T) {
	dir := t.TempDir()
	const n = 3*tracefile.CondensedBatchRows + 1000 // four record batches
	path := genTrace(t, dir, "p.arrow", GenConfig{Requests: n, Keys: 20_000, Alpha: 0.8, Locality: 0.3, Window: 32, Seed: 3})
	for _, tc := range []struct {
		name  string
		cfg   Config
		total int64 // requests of the grid
		units int64
	}{
		// One run: the one-pass LRU curve, streamed.
		{"lru curve", Config{Policies: []string{"lru"}, Sizes: PaperSizes()}, n, 1},
		// One run: the MIN curve, in memory.
		{"min curve", Config{Policies: []string{"min"}, Sizes: PaperSizes()}, n, 1},
		// Per size: lru and min (in memory) at 2 sizes, random at 2 sizes
		// with 3 seeds (a pass each).
		{"per size", Config{Policies: []string{"lru", "min", "random"}, Sizes: []int{16, 1024}, Seeds: 3}, (2 + 2 + 2*3) * n, 6},
		// Sampled: runs read the whole trace (streamed) or the sample held
		// in memory (min); infinite and lru are one run each.
		{"sampled", Config{Policies: []string{"infinite", "lru", "min", "clock"}, Sizes: PaperSizes(), Sample: 0.1}, (1 + 1 + 1 + 26) * n, 29},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Traces = []string{path}
			cfg.Workers = 1
			pts := runProgress(t, cfg)
			var prev progressPoint
			inside := false
			for _, p := range pts {
				if p.total != tc.total || p.units != tc.units {
					t.Fatalf("line with %d/%d requests, %d/%d runs; want totals %d requests, %d runs", p.done, p.total, p.runs, p.units, tc.total, tc.units)
				}
				if p.done < prev.done || p.runs < prev.runs || p.done > p.total {
					t.Fatalf("progress went from %+v to %+v", prev, p)
				}
				if p.runs == 0 && p.done > 0 {
					inside = true // moved within the first run
				}
				prev = p
			}
			if prev.done != tc.total || prev.runs != tc.units {
				t.Errorf("last line %+v, want %d requests and %d runs done", prev, tc.total, tc.units)
			}
			if !inside {
				t.Errorf("no line within the first run: %+v", pts)
			}
		})
	}
}

// A text trace's length is unknown before a pass: the lines count requests
// with their rate, without a total or an ETA.
func TestProgressUnknownTotal(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 5000 {
		b.WriteString(strconv.Itoa(i%300) + "\n")
	}
	path := dir + "/t.txt"
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cfg := Config{Traces: []string{path}, Format: FormatText, Policies: []string{"lru"}, Sizes: []int{16}, Workers: 1,
		Progress: &progress.Sink{W: &out, Every: -1}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^replay: [0-9hm]+s (\d+) requests, [0-9.kM]+ requests/s; [01]/1 runs$`)
	var last string
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		if m := re.FindStringSubmatch(l); m == nil {
			t.Fatalf("line %q does not match %v", l, re)
		} else {
			last = m[1]
		}
	}
	if last != "5000" {
		t.Errorf("last line counts %s requests, want 5000", last)
	}
}
