package crawltest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// fakeT records what WaitFor reports instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f) // as t.Fatalf stops the goroutine
}

func waitFor(d time.Duration, cond func() bool) (failed string) {
	f := &fakeT{}
	defer func() {
		if r := recover(); r != nil && r != f {
			panic(r)
		}
		failed = f.failed
	}()
	crawltest.WaitFor(f, "the thing", d, cond)
	return ""
}

// WaitFor returns once the condition holds, polling it until then, and
// fails the test naming what it waited for when it never holds.
func TestWaitFor(t *testing.T) {
	var n atomic.Int32
	if f := waitFor(10*time.Second, func() bool { return n.Add(1) == 5 }); f != "" || n.Load() != 5 {
		t.Errorf("condition true at the 5th poll: failed %q after %d polls", f, n.Load())
	}
	if f := waitFor(20*time.Millisecond, func() bool { return false }); !strings.Contains(f, "timed out") {
		t.Errorf("condition never true: failed %q, want a time-out", f)
	}
	// An event from another goroutine ends the wait.
	var set atomic.Bool
	go func() { set.Store(true) }()
	if f := waitFor(10*time.Second, set.Load); f != "" {
		t.Errorf("condition set by another goroutine: failed %q", f)
	}
}

// Until reports whether the condition held before the context ended.
func TestUntil(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if crawltest.Until(ctx, func() bool { return false }) {
		t.Error("Until true on a condition never true")
	}
	if !crawltest.Until(ctx, func() bool { return true }) {
		t.Error("Until false on a condition true at once")
	}
}
