package condense

import (
	"fmt"
	"math/rand/v2"
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
