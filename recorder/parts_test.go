package recorder

import (
	"math/rand/v2"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/due"
)

func TestDUE(t *testing.T) {
	d := due.NewMemory(0)
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
