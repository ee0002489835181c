package frontier

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// Server queues spilled to disk under a tiny budget serve URLs in the
// same order as queues kept in memory, FIFO and LIFO, with adds and pops
// interleaved.
func TestSpilledQueuesKeepOrder(t *testing.T) {
	for _, order := range []string{OrderBFS, OrderDFS, OrderPerformance} {
		store, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ref := newScheduler(order, 1, nil)
		sp := newScheduler(order, 1, nil)
		sp.store, sp.budget = store, 4<<10
		rng := rand.New(rand.NewPCG(7, 7))
		now := time.Now()
		keys := []string{"a.test", "b.test", "c.test"} // politeness keys (hosts)
		n := 0
		for step := 0; step < 40000; step++ {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(3) > 0 {
				u := fmt.Sprintf("http://%s/p%d", k, n)
				n++
				ref.add(u, 0, now)
				sp.add(u, 0, now)
				continue
			}
			hr, hs := ref.hosts[k], sp.hosts[k]
			if hr == nil || hr.queued() == 0 {
				continue
			}
			if hs.queued() != hr.queued() {
				t.Fatalf("%s: step %d: %s holds %d URLs, want %d", order, step, k, hs.queued(), hr.queued())
			}
			a, b := ref.popURL(hr), sp.popURL(hs)
			if a.url != b.url {
				t.Fatalf("%s: step %d: popped %s, want %s", order, step, b.url, a.url)
			}
		}
		if sp.storeErr != nil {
			t.Fatal(sp.storeErr)
		}
		st := store.Stats()
		if st.Written == 0 || st.Read == 0 {
			t.Fatalf("%s: nothing spilled: %+v", order, st)
		}
		// Everything still queued comes back, in order.
		for _, k := range keys {
			hr, hs := ref.hosts[k], sp.hosts[k]
			got := sp.queuedURLs(&hs.urls)
			want := ref.queuedURLs(&hr.urls)
			if len(got) != len(want) {
				t.Fatalf("%s: %s: %d queued, want %d", order, k, len(got), len(want))
			}
			for i := range got {
				if got[i].url != want[i].url {
					t.Fatalf("%s: %s: queued #%d %s, want %s", order, k, i, got[i].url, want[i].url)
				}
			}
			for hr.queued() > 0 {
				if a, b := ref.popURL(hr), sp.popURL(hs); a.url != b.url {
					t.Fatalf("%s: drain: popped %s, want %s", order, b.url, a.url)
				}
			}
		}
		if sp.mem != 0 || store.Stats().OnDisk != 0 {
			t.Errorf("%s: drained, yet %d bytes in memory and %d on disk", order, sp.mem, store.Stats().OnDisk)
		}
		store.Close()
	}
}

// queuedURLs returns every URL of q in queue order.
func (s *scheduler) queuedURLs(q *urlQueue) []qurl {
	var out []qurl
	if err := s.eachQueued(q, func(u string, x float64) error {
		out = append(out, qurl{url: u, q: x})
		return nil
	}); err != nil {
		s.storeErr = err
	}
	return out
}
