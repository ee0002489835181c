package frontier

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/robots"
)

// testFrontier is a frontier of order keyed by host name.
func testFrontier(order string) *Frontier {
	return New(Options{Order: order, Seed: 1})
}

func TestFrontierOrders(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  []string
	}{
		{OrderBFS, []string{"http://a/1", "http://a/2", "http://a/3"}},
		{OrderDFS, []string{"http://a/3", "http://a/2", "http://a/1"}},
	} {
		f := testFrontier(tc.order)
		for _, u := range []string{"http://a/1", "http://a/2", "http://a/3"} {
			f.Add(u)
		}
		var got []string
		for range 3 {
			tk, _ := f.Next(t.Context())
			if tk.Robots {
				f.RobotsDone(tk.Host, tk.URL, func(*robots.Rules) *robots.Rules { return robots.New(404, "", nil, "x") })
				f.Release(tk.Host, true, 0)
				tk, _ = f.Next(t.Context())
			}
			got = append(got, tk.URL)
			f.Release(tk.Host, true, 0)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v", tc.order, got)
		}
	}
}

// TestBackoffRetry: a URL whose server asked to come back later is queued
// again ahead of the host's other URLs, no longer in flight, and comes
// back once the wait is over with one more try counted; the host gives
// nothing before then.
func TestBackoffRetry(t *testing.T) {
	f := testFrontier(OrderBFS)
	f.Add("http://a/1")
	f.Add("http://a/2")
	tk, _ := f.Next(t.Context())
	f.RobotsDone(tk.Host, tk.URL, func(*robots.Rules) *robots.Rules { return robots.New(404, "", nil, "x") })
	f.Release(tk.Host, true, 0)
	tk, _ = f.Next(t.Context())
	if tk.URL != "http://a/1" || tk.Tries != 0 {
		t.Fatalf("first task %q, tries %d", tk.URL, tk.Tries)
	}
	const wait = 200 * time.Millisecond
	start := time.Now()
	f.Backoff(tk, 0, wait, false, true)
	f.mu.Lock()
	inflight := len(f.inflight)
	f.mu.Unlock()
	if inflight != 0 {
		t.Errorf("%d URLs in flight after the retry was queued, want 0", inflight)
	}
	if q := f.Snapshot().Queued; q != 2 {
		t.Errorf("%d URLs queued, want 2", q)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait/2)
	if early, ok := f.Next(ctx); ok {
		t.Errorf("the host gave %q before the wait its server asked", early.URL)
	}
	cancel()
	tk, _ = f.Next(t.Context())
	if tk.URL != "http://a/1" || tk.Tries != 1 || time.Since(start) < wait {
		t.Errorf("after the wait: %q, tries %d, %v after the backoff", tk.URL, tk.Tries, time.Since(start))
	}
	f.Backoff(tk, 0, 0, false, false) // not again: the next URL follows
	tk, _ = f.Next(t.Context())
	if tk.URL != "http://a/2" || tk.Tries != 0 {
		t.Errorf("then %q, tries %d", tk.URL, tk.Tries)
	}
}
