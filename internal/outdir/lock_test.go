package outdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The locks of a crawl directory: node directories exclusive, the crawl
// directory exclusive for a whole-directory writer and shared between
// the nodes of a TCP crawl. flock(2) locks conflict between two opens of
// a file in one process too, so the rules can be checked here; the CLI
// tests check them between processes.
func TestLockCrawl(t *testing.T) {
	root := filepath.Join(t.TempDir(), "crawl")
	node := func(i int) string { return filepath.Join(root, fmt.Sprintf("node-%03d", i)) }
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d on host %s", os.Getpid(), host)

	refusedBy := func(t *testing.T, err error, by string) {
		t.Helper()
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), by) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("got %v, want a one-line refusal naming %q", err, by)
		}
	}

	// Two TCP nodes share the crawl directory.
	n0, err := LockCrawl("crawl", root, []string{node(0)}, true)
	if err != nil {
		t.Fatal(err)
	}
	n1, err := LockCrawl("crawl", root, []string{node(1)}, true)
	if err != nil {
		t.Fatal(err)
	}
	// A second process for node 1 is refused, naming node 1's holder.
	_, err = LockCrawl("crawl", root, []string{node(1)}, true)
	refusedBy(t, err, "crawltrace crawl, "+holder)
	// An import (the whole directory) is refused while nodes run...
	_, err = LockCrawl("import", root, nil, false)
	refusedBy(t, err, "TCP crawl")
	// ... and so is an in-process crawl, at the first node it would take.
	_, err = LockCrawl("crawl", root, []string{node(0), node(1)}, false)
	refusedBy(t, err, holder)
	n0.Unlock()
	n1.Unlock()
	n1.Unlock() // twice is harmless

	// Once they end, a whole-directory writer takes it, and nodes are
	// refused, naming it.
	imp, err := LockCrawl("import", root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockCrawl("crawl", root, []string{node(0)}, true)
	refusedBy(t, err, "crawltrace import, "+holder)
	// A refused attempt released what it took: node 0 is free.
	imp.Unlock()
	if l, err := LockCrawl("crawl", root, []string{node(0)}, false); err != nil {
		t.Fatalf("after every holder ended: %v", err)
	} else {
		l.Unlock()
	}

	// A file where the directory should be is refused, not created.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	_, err = LockCrawl("import", file, nil, false)
	refusedBy(t, err, "is a file")

	var none *Lock
	none.Unlock()
}

// What a killed holder wrote is not taken for the holder's name.
func TestLockHolderGone(t *testing.T) {
	host, _ := os.Hostname()
	// A pid above pid_max (4194304 at most on Linux) runs no process.
	for _, tc := range []struct {
		info string
		gone bool
	}{
		{fmt.Sprintf("crawltrace crawl, pid %d on host %s", os.Getpid(), host), false},
		{fmt.Sprintf("crawltrace crawl, pid 99999999 on host %s", host), true},
		{"crawltrace import, pid 99999999 on host elsewhere.example", false},
		{"garbage", false},
	} {
		if got := gone(tc.info); got != tc.gone {
			t.Errorf("gone(%q) = %v, want %v", tc.info, got, tc.gone)
		}
	}
}
