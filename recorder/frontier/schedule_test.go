package frontier

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

var t0 = time.Unix(1_700_000_000, 0)

// constructed builds a scheduler of order over hosts a, b, c (added in
// that order) with the given URLs and qualities, robots.txt already
// known, and the estimates est (by host) in place.
func constructed(t *testing.T, order string, urls map[string][]float64, est map[string]serverEstimate) *scheduler {
	t.Helper()
	oracle := map[string]float64{}
	s := newScheduler(order, 1, oracle)
	for _, h := range []string{"a", "b", "c"} {
		for i, q := range urls[h] {
			u := "http://" + h + "/" + string(rune('0'+i))
			oracle[u] = q
			s.add(u, s.quality(u), t0)
		}
	}
	for name, h := range s.hosts {
		h.robots = robots.New(404, "", nil, "x")
		h.est = est[name]
	}
	// Keys depend on the estimates just set.
	for _, h := range s.ready.hs {
		h.key = s.key(h)
	}
	heap.Init(&s.ready)
	return s
}

// pickURL picks a host and pops its next URL.
func pickURL(t *testing.T, s *scheduler) (host, url string) {
	t.Helper()
	h, _, _ := s.pick(t0, nil)
	if h == nil {
		t.Fatal("nothing to pick")
	}
	return h.origin, s.popURL(h).url
}

var (
	// a: one good URL then poor ones; b: several fair ones; c: one URL.
	qualities = map[string][]float64{
		"a": {0.1, 0.5, 0.1},
		"b": {0.3, 0.35, 0.3, 0.3},
		"c": {0.2},
	}
	// Same times (connection 100ms, response 100ms) everywhere; a serves 1
	// page per connection, b 3, c is new (P = min(50, queued) = 1).
	estimates = map[string]serverEstimate{
		"a": {conn: 0.1, resp: 0.1, rpc: 1, connN: 1, respN: 1, rpcN: 1},
		"b": {conn: 0.1, resp: 0.1, rpc: 3, connN: 1, respN: 1, rpcN: 1},
		"c": {conn: 0.2, resp: 0.1, connN: 1, respN: 1},
	}
)

// TestSchedulerOrdersPick checks the first server and URL of each order
// on constructed queues, with the ranks computed by hand:
//
//	performance P/T: a 1/(0.2+0.12) = 3.125, b 3/(0.2+0.36) = 5.36, c 1/(0.4+0.12) = 1.92
//	quality, best URL: a 0.5, b 0.35, c 0.2
//	capability sum(next P)/T: a 0.5/0.32 = 1.5625, b (0.35+0.3+0.3)/0.56 = 1.696, c 0.2/0.52 = 0.385
func TestSchedulerOrdersPick(t *testing.T) {
	for _, tc := range []struct {
		order, host, url string
	}{
		{OrderBFS, "a", "http://a/0"},         // first server, first URL
		{OrderDFS, "a", "http://a/2"},         // first server, last URL
		{OrderPerformance, "b", "http://b/0"}, // best P/T, FIFO
		{OrderQuality, "a", "http://a/1"},     // best URL anywhere
		{OrderCapability, "b", "http://b/1"},  // best quality per time, best URL
	} {
		s := constructed(t, tc.order, qualities, estimates)
		host, url := pickURL(t, s)
		if host != tc.host || url != tc.url {
			t.Errorf("%s: picked %s %s, want %s %s", tc.order, host, url, tc.host, tc.url)
		}
	}
}

// TestSchedulerOrdersSequence runs each order to the end, one URL per
// connection (every release ends the session), and checks the whole
// fetch sequence.
func TestSchedulerOrdersSequence(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  []string
	}{
		// FIFO servers: a, b, c, then a and b again (re-queued behind c).
		{OrderBFS, []string{"a/0", "b/0", "c/0", "a/1", "b/1", "a/2", "b/2", "b/3"}},
		// b (5.36) stays best while it has 3 or more URLs; then its P
		// drops: b with 2 left: 2/(0.2+0.24) = 4.55, still over a's 3.125;
		// b with 1 left: 1/0.32 = 3.125 ties a, and a entered the queue first.
		{OrderPerformance, []string{"b/0", "b/1", "b/2", "a/0", "b/3", "a/1", "a/2", "c/0"}},
		// b 1.696 (above); then b with 0.3 x3: 0.9/0.56 = 1.607 over a's
		// 1.5625; b with 0.3 x2: 0.6/0.44 = 1.364, so a (its 0.5 first);
		// a left with 0.1 x2: 0.1/0.32 = 0.3125; b with one 0.3:
		// 0.3/0.32 = 0.9375; c 0.385 before a.
		{OrderCapability, []string{"b/1", "b/0", "a/1", "b/2", "b/3", "c/0", "a/0", "a/2"}},
		// Strictly by URL quality; ties first come, first served.
		{OrderQuality, []string{"a/1", "b/1", "b/0", "b/2", "b/3", "c/0", "a/0", "a/2"}},
	} {
		s := constructed(t, tc.order, qualities, estimates)
		var got []string
		for s.queued > 0 {
			h, _, _ := s.pick(t0, nil)
			if h == nil {
				t.Fatalf("%s: nothing to pick with %d queued", tc.order, s.queued)
			}
			got = append(got, h.origin+s.popURL(h).url[len("http://")+1:])
			// Keep the constructed estimates: end the session by hand.
			est := h.est
			s.release(h, t0, true, 0, true)
			h.est = est
			if s.ready.has(h) {
				h.key = s.key(h)
				heap.Fix(&s.ready, h.heapIdx)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.order, got, tc.want)
		}
	}
}

// TestSchedulerNonPreemptive: a server with an open connection is served
// before a better-ranked one without, and a server without one waits
// for a slot while the one with a connection proceeds.
func TestSchedulerNonPreemptive(t *testing.T) {
	s := constructed(t, OrderQuality, qualities, estimates)
	h, _, _ := s.pick(t0, nil) // a, for its 0.5 URL
	if h.origin != "a" || h.sess == nil || s.open != 1 {
		t.Fatalf("picked %s (session %v, %d open)", h.origin, h.sess != nil, s.open)
	}
	s.popURL(h)
	s.release(h, t0, true, 0, false) // connection stays open; a keeps 0.1, 0.1
	slots := NewConnSlots(1)
	if !slots.tryAcquire() {
		t.Fatal("first slot refused")
	}
	// b (0.35) outranks a (0.1), but a holds the open connection.
	h2, _, blocked := s.pick(t0, slots.tryAcquire)
	if h2 == nil || h2.origin != "a" || blocked {
		t.Fatalf("picked %v (blocked %v), want a on its open connection", h2, blocked)
	}
	if u := s.popURL(h2).url; u != "http://a/0" {
		t.Errorf("a's next URL %s, want http://a/0 (quality tie, first come)", u)
	}
	ended, _ := s.release(h2, t0, true, 0, true) // the server closed it
	if !ended || s.open != 0 {
		t.Fatalf("session not ended (ended %v, %d open)", ended, s.open)
	}
	// No free slot: b waits.
	if h3, _, blocked := s.pick(t0, slots.tryAcquire); h3 != nil || !blocked {
		t.Fatalf("picked %v without a free slot (blocked %v)", h3, blocked)
	}
	slots.release()
	if h3, _, _ := s.pick(t0, slots.tryAcquire); h3 == nil || h3.origin != "b" {
		t.Fatalf("after a slot was freed picked %v, want b", h3)
	}
}

// TestSchedulerPoliteness: a released host waits its delay, and pick
// says how long.
func TestSchedulerPoliteness(t *testing.T) {
	s := constructed(t, OrderBFS, map[string][]float64{"a": {0, 0}}, nil)
	h, _, _ := s.pick(t0, nil)
	s.popURL(h)
	s.release(h, t0, true, 50*time.Millisecond, false)
	if h2, wait, _ := s.pick(t0.Add(20*time.Millisecond), nil); h2 != nil || wait != 30*time.Millisecond {
		t.Fatalf("picked %v, wait %v; want nothing for 30ms", h2, wait)
	}
	if h2, _, _ := s.pick(t0.Add(50*time.Millisecond), nil); h2 != h || h.sess == nil {
		t.Fatalf("picked %v after the delay, want a on its open connection", h2)
	}
}

func TestScheduleSessionLearns(t *testing.T) {
	s := newScheduler(OrderPerformance, 1, nil)
	s.add("http://a/1", 0, t0)
	s.add("http://a/2", 0, t0)
	h, _, _ := s.pick(t0, nil)
	h.robots = robots.New(404, "", nil, "x")
	h.sess.sample.observe(&fetch.Conn{GotConn: true, Dialed: true, Dial: ms, Took: 20 * ms, Closed: true})
	s.popURL(h)
	s.release(h, t0, true, 0, true)
	if h.est.rpc != 1 || !near(h.est.resp, 0.020) || !near(s.def.resp, 0.020) {
		t.Errorf("host estimate %+v, node default %+v", h.est, s.def)
	}
	if s.open != 0 || h.sess != nil {
		t.Errorf("session still open")
	}
}

// TestURLQueueTopSum checks the best-first heap walk against sorting.
func TestURLQueueTopSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		q := urlQueue{byQuality: true}
		n := r.IntN(40)
		var all []float64
		for i := 0; i < n; i++ {
			v := float64(r.IntN(10)) / 10 // ties on purpose
			all = append(all, v)
			q.push(qurl{q: v, seq: uint64(i)})
		}
		// Pop a few best ones and check they come out in order.
		sort.Sort(sort.Reverse(sort.Float64Slice(all)))
		for p := 0; p < n/4; p++ {
			if got := q.popBest().q; got != all[0] {
				t.Fatalf("popBest %v, want %v", got, all[0])
			}
			all = all[1:]
		}
		for k := 0; k <= len(all)+1; k++ {
			var want float64
			for i := 0; i < k && i < len(all); i++ {
				want += all[i]
			}
			if got := q.topSum(k); !near(got, want) {
				t.Fatalf("trial %d: topSum(%d) = %v, want %v", trial, k, got, want)
			}
		}
	}
}

// BenchmarkScheduler adds URLs of random quality over 1,000 hosts and
// serves them, one URL per connection session, under each order; it
// reports URLs scheduled (added and served) per second.
func BenchmarkScheduler(b *testing.B) {
	const hosts, urls = 1000, 50_000
	r := rand.New(rand.NewPCG(3, 4))
	us := make([]string, urls)
	qs := make([]float64, urls)
	for i := range us {
		us[i] = "http://h" + strconv.Itoa(r.IntN(hosts)) + ".test/p/" + strconv.Itoa(i)
		qs[i] = r.Float64()
	}
	for _, order := range []string{OrderBFS, OrderPerformance, OrderQuality, OrderCapability} {
		b.Run(order, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := newScheduler(order, 1, nil)
				for j, u := range us {
					s.add(u, qs[j], t0)
				}
				for s.queued > 0 {
					h, _, _ := s.pick(t0, nil)
					h.robots = robotsAllowAll
					s.popURL(h)
					s.release(h, t0, true, 0, true)
				}
			}
			b.ReportMetric(float64(b.N)*urls/b.Elapsed().Seconds(), "urls/s")
		})
	}
}

var robotsAllowAll = robots.New(404, "", nil, "x")
