package recorder

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	frontierdisk "github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// Server queues spilled to disk under a tiny budget serve URLs in the
// same order as queues kept in memory, FIFO and LIFO, with adds and pops
// interleaved.
func TestSpilledQueuesKeepOrder(t *testing.T) {
	for _, order := range []string{OrderBFS, OrderDFS, OrderPerformance} {
		store, err := frontierdisk.Open(t.TempDir())
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

// A crawl whose server queues spill to disk and whose DUE moves to disk
// midway (a tiny --memory) logs the same URLs and fetches the same pages
// as one that keeps both in memory.
func TestSpillingCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a test web twice")
	}
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 3, 600, 0
	srv := crawltest.Serve(t, wc)
	mem := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
	runCrawl(t, mem)
	disk := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
	disk.Memory = 64 << 10
	res := runCrawl(t, disk)
	if res.Stats.FrontierSpillWritten == 0 || res.Stats.FrontierSpillRead != res.Stats.FrontierSpillWritten {
		t.Fatalf("spilled %d bytes, read back %d: want some, all read back", res.Stats.FrontierSpillWritten, res.Stats.FrontierSpillRead)
	}
	// The default DUE, auto, outgrew a quarter of the budget and moved to
	// disk midway.
	if res.Stats.DUE != DUEDisk || res.Stats.DUESwitchedAt == 0 || res.Stats.DUEUnique <= res.Stats.DUESwitchedAt {
		t.Fatalf("DUE %s, switched at %d of %d URLs: want a switch to disk midway", res.Stats.DUE, res.Stats.DUESwitchedAt, res.Stats.DUEUnique)
	}
	if a, b := urlMultiset(readURLs(t, mem.OutDir)), urlMultiset(readURLs(t, disk.OutDir)); !reflect.DeepEqual(a, b) {
		t.Fatalf("URL logs differ: %d rows in memory, %d spilled", len(a), len(b))
	}
	mp, _ := crawlSets(t, mem.OutDir, 1)
	dp, _ := crawlSets(t, disk.OutDir, 1)
	sameSet(t, "pages", mp, dp)
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
