package condense

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// firstSeen only ever drops a URL identical to one it was given before for
// which it answered false, whatever the evictions and collisions.
func TestFirstSeenDropsOnlyExactRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fs := newFirstSeen(1, 20) // the smallest table: constant eviction
	spilled := map[string]bool{}
	for i := 0; i < 200_000; i++ {
		k := rng.IntN(5000)
		if rng.IntN(2) == 0 {
			k = rng.IntN(50)
		}
		u := fmt.Sprintf("http://h%d.test/%d", k%7, k)
		fp := uint64(k % 1000) // heavy fingerprint collisions
		if fs.seen(fp, u) {
			if !spilled[u] {
				t.Fatalf("dropped %s, never spilled", u)
			}
			continue
		}
		spilled[u] = true
	}
	if len(spilled) < 4000 {
		t.Errorf("only %d URLs spilled", len(spilled))
	}
	fs.clear()
	if fs.seen(7, "http://h0.test/7") {
		t.Error("cleared table still holds a URL")
	}
}

// A URL longer than the ring, or than an entry can describe, is never kept,
// so never dropped; a copy the ring has lapped is not trusted.
func TestFirstSeenLongAndLapped(t *testing.T) {
	small := newFirstSeen(1, 20) // a 4 KiB ring
	long := strings.Repeat("x", 5000)
	for i := 0; i < 3; i++ {
		if small.seen(1, long) {
			t.Fatal("a URL longer than the ring was dropped")
		}
	}
	big := newFirstSeen(1<<20, 64)
	huge := strings.Repeat("y", maxCopy+1)
	for range 2 { // seen is stateful: the second call must not drop it either
		if big.seen(2, huge) {
			t.Fatal("a URL longer than an entry can describe was dropped")
		}
	}
	u := "http://a.test/kept"
	if big.seen(3, u) || !big.seen(3, u) {
		t.Fatal("a kept URL was not dropped when repeated")
	}
	// Lap the ring exactly, so that another URL's copy starts where u's
	// was, holding a string of u's length that was never kept for fp 3
	// (r, with a colliding fingerprint): a lapped copy must not drop it.
	lapped := newFirstSeen(1<<20, 64)
	if lapped.seen(3, u) {
		t.Fatal("first sight dropped")
	}
	size := lapped.mask + 1
	end := lapped.bucket(3)[0].ref>>16 + size // where u's copy is written over
	next := uint64(1000)
	other := func(n int) { // a new URL of n bytes in another bucket
		for next++; lapped.bucket(next) == lapped.bucket(3); next++ {
		}
		lapped.seen(next, fmt.Sprintf("%0*d", n, next))
	}
	for lapped.head+200 < end {
		other(100)
	}
	other(int(end - lapped.head))
	r := "http://a.test/XXXX"
	for next++; lapped.bucket(next) == lapped.bucket(3); next++ {
	}
	lapped.seen(next, r+"-and-more")
	if lapped.bucket(3)[0].fp != 3 {
		t.Fatal("fp 3's entry was evicted")
	}
	if lapped.seen(3, r) {
		t.Fatal("a lapped copy was trusted: dropped a URL never kept")
	}
}

// sortByFP sorts like a plain sort, whatever the spread of fingerprints.
func TestSortByFP(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{0, 1, 1023, 1024, 5000, 100000} {
		for _, spread := range []uint64{0, 1, 1000, 1 << 40, ^uint64(0)} {
			ents := make([]entry, n)
			for i := range ents {
				ents[i] = entry{fp: 0xabc0000000000000 + rng.Uint64N(spread|1)*min(spread, 1), off: uint32(i)}
				if spread == ^uint64(0) {
					ents[i].fp = rng.Uint64()
				}
			}
			want := slices.Clone(ents)
			slices.SortStableFunc(want, func(a, b entry) int { return cmp.Compare(a.fp, b.fp) })
			sortByFP(ents)
			if !slices.IsSortedFunc(ents, func(a, b entry) int { return cmp.Compare(a.fp, b.fp) }) {
				t.Fatalf("n %d spread %d: not sorted", n, spread)
			}
			got := slices.Clone(ents)
			slices.SortStableFunc(got, func(a, b entry) int { return cmp.Compare(a.off, b.off) })
			slices.SortStableFunc(want, func(a, b entry) int { return cmp.Compare(a.off, b.off) })
			if !slices.Equal(got, want) {
				t.Fatalf("n %d spread %d: entries lost", n, spread)
			}
		}
	}
}
