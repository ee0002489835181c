package bytebudget

import "testing"

// A budget takes what fits, refuses (TryAcquire) or holds back (Acquire)
// what does not until bytes are released, lets a message larger than the
// whole budget through alone, and reports its peak.
func TestBudget(t *testing.T) {
	b := New(100)
	if !b.TryAcquire(60) {
		t.Fatal("60 of 100 bytes refused")
	}
	if b.TryAcquire(50) {
		t.Fatal("110 of 100 bytes taken")
	}
	done := make(chan struct{})
	go func() { b.Acquire(50); close(done) }()
	b.Release(60)
	<-done // 50 fit once 60 are back
	if b.TryAcquire(51) {
		t.Fatal("101 of 100 bytes taken")
	}
	b.Release(50)
	// Larger than the budget: goes alone, and nothing else fits meanwhile.
	b.Acquire(500)
	if b.TryAcquire(1) {
		t.Fatal("a byte taken beside a message larger than the budget")
	}
	b.Release(500)
	if peak, _ := b.Stats(); peak != 500 {
		t.Errorf("peak %d, want 500", peak)
	}
	var none *Budget
	none.Acquire(1 << 40)
	if !none.TryAcquire(1<<40) || func() bool { p, w := none.Stats(); return p != 0 || w != 0 }() {
		t.Error("a nil budget bounds something")
	}
	none.Release(1)
}
