package replay

import (
	"context"
	"errors"
	"testing"
)

// A canceled run stops with the context's error, in every kind of unit
// (LRU's and MIN's one-pass curves, offline and online policies), and
// MIN's marker pass stops on its own.
func TestRunCanceled(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Traces = []string{genTrace(t, dir, "t.arrow", smallGen(1))}
	cfg.Policies = []string{"lru", "min", "static", "clock", "infinite"}
	cfg.Sizes = []int{16, 256}
	cfg.Plots = false
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := Run(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled run: %v, %v", res, err)
	}
	keys, err := ReadFile(cfg.Traces[0], FormatCondensed)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	close(closed)
	if _, err := minMarkers(closed, keys, nil, cfg.Sizes, 0, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("minMarkers: %v", err)
	}
}
