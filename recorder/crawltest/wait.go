package crawltest

import (
	"context"
	"testing"
	"time"
)

// Polling intervals of [WaitFor] and [Until]: the first poll comes soon,
// for conditions met at once; the interval then doubles up to pollMax,
// so that a wait of seconds (a child process's crawl, a peer's status
// over HTTP) costs a few polls a second.
const (
	pollMin = 2 * time.Millisecond
	pollMax = 50 * time.Millisecond
)

// WaitFor waits until cond holds and fails the test, naming what it
// waited for, if it does not within d. It is the way a test waits for
// an event (a file written, a status reached, a process up) instead of
// sleeping for a time it hopes is enough. It must be called from the
// test's goroutine; elsewhere use [Until].
func WaitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if !Until(ctx, cond) {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// Until polls cond until it holds (true) or ctx is done (false, unless
// cond holds at that last poll). It never fails a test, so any goroutine
// may use it.
func Until(ctx context.Context, cond func() bool) bool {
	for wait := pollMin; ; wait = min(2*wait, pollMax) {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-time.After(wait):
		}
	}
}
