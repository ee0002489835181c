package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// batchProgress makes progress print a line at every update, on a clock
// that advances one second per reading, for the length of a test.
func batchProgress(t *testing.T) {
	t.Helper()
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	progressEvery = -1
	progressNow = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
	t.Cleanup(func() { progressEvery, progressNow = 0, nil })
}

// In batch mode (stderr not a terminal) condense, replay and scenario print
// plain progress lines with rate, percentage and ETA; --progress never
// silences them; a bad --progress value is a usage error.
func TestBatchProgressLines(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 10000 {
		b.WriteString("http://h" + strconv.Itoa(i%37) + ".test/p/" + strconv.Itoa(i%2500) + "\n")
	}
	urls := filepath.Join(dir, "u.txt")
	os.WriteFile(urls, []byte(b.String()), 0o644)
	raw, cond := filepath.Join(dir, "raw"), filepath.Join(dir, "cond")
	mustRun(t, "import", "urls", urls, "--nodes", "2", "-o", raw)

	batchProgress(t)
	line := regexp.MustCompile(`^condense: reading: \d+s \d+/10000 rows \(\d+\.\d%\), [0-9.k]+ rows/s(, ETA \d+s)?$`)
	code, _, errs := runCLI(t, "condense", raw, "-o", cond)
	if code != 0 || !hasLine(errs, line) || strings.Contains(errs, "\r") {
		t.Errorf("condense: exit %d, stderr:\n%s", code, errs)
	}
	line = regexp.MustCompile(`^replay: [0-9hm]+s \d+/\d+ requests \(\d+\.\d%\), [0-9.kM]+ requests/s, ETA [0-9hm]+s; [1-7]/8 runs$`)
	code, _, errs = runCLI(t, "replay", cond, "--policies", "lru,fifo", "--sizes", "16", "--no-plots", "--jobs", "1", "-o", filepath.Join(dir, "r1"))
	if code != 0 || !hasLine(errs, line) {
		t.Errorf("replay: exit %d, stderr:\n%s", code, errs)
	}
	line = regexp.MustCompile(`^scenario locality: \d+s 8192/10000 rows \(81\.9%\), [0-9.]+ rows/s, ETA \d+s$`)
	code, _, errs = runCLI(t, "scenario", "locality", raw, "--sizes", "16", "--no-plots", "-o", filepath.Join(dir, "s1"))
	if code != 0 || !hasLine(errs, line) {
		t.Errorf("scenario: exit %d, stderr:\n%s", code, errs)
	}
	code, _, errs = runCLI(t, "--progress", "never", "replay", cond, "--policies", "lru", "--sizes", "16", "--no-plots", "-o", filepath.Join(dir, "r2"))
	if code != 0 || errs != "" {
		t.Errorf("--progress never: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "replay", cond, "--progress", "sometimes", "-o", filepath.Join(dir, "r3"))
	if code != 2 || !strings.Contains(errs, "--progress") || strings.Count(errs, "\n") != 1 {
		t.Errorf("--progress sometimes: exit %d, stderr %q", code, errs)
	}
}

func hasLine(s string, re *regexp.Regexp) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
