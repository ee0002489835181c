package policy

import (
	"context"
	"errors"
	"testing"
)

// The whole-trace passes of the offline policies stop on a closed cancel
// channel; an open one changes nothing.
func TestOfflinePassesCancel(t *testing.T) {
	trace := make([]uint64, 3*CheckEvery)
	for i := range trace {
		trace[i] = uint64(i % 1000)
	}
	closed := make(chan struct{})
	close(closed)
	if _, err := NextUseCancel(trace, closed); !errors.Is(err, context.Canceled) {
		t.Errorf("NextUseCancel: %v", err)
	}
	for _, name := range []string{"static", "min"} {
		if _, err := New(name, 10, Options{Trace: trace, Cancel: closed}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := New(name, 10, Options{Trace: trace, Cancel: make(chan struct{})}); err != nil {
			t.Errorf("%s with an open channel: %v", name, err)
		}
	}
	next, err := NextUseCancel(trace, make(chan struct{}))
	if err != nil || len(next) != len(trace) || next[0] != 1000 {
		t.Errorf("NextUseCancel with an open channel: %v, next[0] %d", err, next[0])
	}
}
