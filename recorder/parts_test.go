package recorder

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/recorder/due"
)

func TestDUE(t *testing.T) {
	d := NewDUE(0)
	ref := map[uint64]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300000; i++ {
		fp := r.Uint64N(200000) * 0x9e3779b97f4a7c15
		if i%1000 == 0 {
			fp = 0 // stored as 1
		}
		if got, want := d.Add(fp), !ref[max(fp, 1)]; got != want {
			t.Fatalf("Add(%x) = %v, want %v", fp, got, want)
		}
		ref[max(fp, 1)] = true
	}
	if d.Len() != len(ref) {
		t.Errorf("Len %d, want %d", d.Len(), len(ref))
	}
	for fp := range ref {
		if !d.Contains(fp) {
			t.Fatalf("lost %x", fp)
		}
	}
	if bpu := float64(d.Bytes()) / float64(d.Len()); bpu > 12.5 {
		t.Errorf("%.1f bytes per URL", bpu)
	}
}

func TestClockCache(t *testing.T) {
	c := due.NewClock(2)
	for _, step := range []struct {
		fp  uint64
		hit bool
	}{{1, false}, {2, false}, {1, true}, {3, false}, {1, true}, {2, false}, {3, false}} {
		// After 1,2 (1 marked), 3 evicts 2 (1's mark is cleared first and
		// the hand moves on), so 1 still hits and 2 misses.
		if got := c.Access(step.fp); got != step.hit {
			t.Fatalf("access(%d) = %v, want %v", step.fp, got, step.hit)
		}
	}
}

func TestForbiddenIP(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.1.1", "::1", "fe80::1", "224.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1", "100.64.0.1"} {
		if !forbiddenIP(mustAddr(s)) {
			t.Errorf("%s allowed", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "2001:4860:4860::8888", "93.184.216.34"} {
		if forbiddenIP(mustAddr(s)) {
			t.Errorf("%s refused", s)
		}
	}
}

func TestFrontierOrders(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  []string
	}{
		{OrderBFS, []string{"http://a/1", "http://a/2", "http://a/3"}},
		{OrderDFS, []string{"http://a/3", "http://a/2", "http://a/1"}},
	} {
		f := newFrontier(tc.order, 1)
		for _, u := range []string{"http://a/1", "http://a/2", "http://a/3"} {
			f.add(u)
		}
		var got []string
		for range 3 {
			tk, _ := f.next(t.Context())
			if tk.robots {
				f.robotsDone(tk.host, tk.url, func(*robotsRules) *robotsRules { return newRobotsRules(404, "", nil, "x") })
				f.release(tk.host, true, 0)
				tk, _ = f.next(t.Context())
			}
			got = append(got, tk.url)
			f.release(tk.host, true, 0)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v", tc.order, got)
		}
	}
	_ = xxhash.Sum64String
}
