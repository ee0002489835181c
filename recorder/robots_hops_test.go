package recorder

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// A key a hop holds is never forgotten when the gate prunes: a second hop
// to it still waits for the first.
func TestHopGateKeepsHeldKeys(t *testing.T) {
	var g hopGate
	ctx := context.Background()
	held, ok := g.acquire(ctx, "busy")
	if !ok {
		t.Fatal("acquire")
	}
	for i := range hopGateLimit + 10 { // forces pruning
		e, _ := g.acquire(ctx, "k"+strconv.Itoa(i))
		g.release(e, 0)
	}
	if len(g.keys) > hopGateLimit {
		t.Errorf("%d keys kept, limit %d", len(g.keys), hopGateLimit)
	}
	got := make(chan time.Time, 1)
	go func() {
		e, _ := g.acquire(ctx, "busy")
		got <- time.Now()
		g.release(e, 0)
	}()
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	g.release(held, 0)
	if at := <-got; at.Before(released) {
		t.Errorf("a second hop to a held key started %v before the first ended", released.Sub(at))
	}
}
