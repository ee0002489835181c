package policy

import (
	"slices"
	"testing"
)

// Small traces worked out by hand from the papers' rules. Each pins a rule
// where crawltrace had to choose between the paper and some libCacheSim
// version (see the policies' doc comments).

func checkHits(t *testing.T, p Policy, trace []uint64, hits []int) {
	t.Helper()
	for i, k := range trace {
		got, want := p.Access(k), slices.Contains(hits, i)
		if got != want {
			t.Fatalf("%s: request %d (key %d): hit=%v, want %v", p.Name(), i, k, got, want)
		}
	}
}

// k = 10: |S| = 1, |M| = 9, |G| = 9.
func TestS3FIFOByHand(t *testing.T) {
	trace := []uint64{
		1, 1, 1, // 1 enters S, two hits: freq 2
		2, 3, 4, 5, 6, 7, 8, 9, 10, // S = 1..10 (oldest first), M empty
		11,               // evict from S: 1 (freq 2) moves to M, 2 goes to G; S = 3..11
		2,                // ghost hit: miss; 3 goes to G; 2 enters M = [1 2]
		3,                // ghost hit: 4 to G; M = [1 2 3]
		1,                // hit, freq 1
		4, 5, 6, 7, 8, 9, // ghost hits; M = [1..9], S = [11]
		10, // ghost hit: M holds 9 (not more than its share), so 11 goes to G; M = [1..10], S empty
		12, // M over its share: 1 (freq 1) goes round with 0, 2 is evicted (not to G); S = [12]
		2,  // miss; 12 goes to G, 2 enters S
		1,  // hit
		12, // ghost hit: 2 goes to G; M = [3..10 1 12]
		13, // M over its share: 3 (freq 0) is evicted; 13 enters S
		3,  // miss
	}
	checkHits(t, NewS3FIFO(10), trace, []int{1, 2, 15, 25})
}

// The paper's INSERT puts every key that is not in G into S, also while the
// cache fills. libCacheSim's S3FIFO.c since December 2024 instead puts keys
// into M once S is full until the first eviction, which would leave 2..10 in
// M and make the last request a hit.
func TestS3FIFOWarmupFillsSmall(t *testing.T) {
	trace := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2}
	// 11 evicts 1 from S into G, 12 evicts 2: 2 is a ghost, so a miss.
	checkHits(t, NewS3FIFO(10), trace, nil)
}

// c = 6. Figure 4 of Megiddo & Modha adapts p by |B2|/|B1| or |B1|/|B2|,
// not by their integer quotients; request 17 is where that shows.
func TestARCByHand(t *testing.T) {
	trace := []uint64{
		1, 10, 8, 7, // T1 = [1 10 8 7] (LRU first)
		8,      // hit: T2 = [8]
		11, 12, // T1 = [1 10 7 11 12], six keys cached
		2,  // IV, total 6: REPLACE with p = 0 moves 1 to B1
		10, // hit: T2 = [8 10]
		6,  // REPLACE: 7 to B1 = [1 7]; T1 = [11 12 2 6]
		1,  // B1 hit: p = 1; REPLACE: 11 to B1; T2 = [8 10 1]
		4,  // REPLACE: 12 to B1 = [7 11 12]; T1 = [2 6 4]
		6,  // hit: T2 = [8 10 1 6], T1 = [2 4]
		7,  // B1 hit: p = 2; |T1| = 2 is not > p: 8 to B2 = [8]
		5,  // REPLACE: 10 to B2 = [8 10]; T1 = [2 4 5]
		9,  // REPLACE: |T1| = 3 > 2: 2 to B1 = [11 12 2]
		8,  // B2 hit: p = 2 - 3/2 = 0.5 (integer steps: 2 - 1 = 1); 4 to B1
		11, // B1 hit: p = 1.5 (integer: 2); |T1| = 2 > 1.5: 5 to B1 (integer: 1 to B2)
		1,  // still in T2: hit (integer steps: a miss)
	}
	checkHits(t, NewARC(6), trace, []int{4, 8, 12, 18})
}

// RANDOM evicts every cached key with the same probability, whatever the
// order it arrived in (libCacheSim's Random does not; see [Random]).
func TestRandomVictimUniform(t *testing.T) {
	const k, runs = 8, 8000
	var evicted [k]int
	for seed := uint64(1); seed <= runs; seed++ {
		p := NewRandom(k, seed)
		for key := uint64(0); key < k; key++ {
			p.Access(key)
		}
		p.Access(100)
		for key := uint64(0); key < k; key++ {
			if !p.Access(key) {
				evicted[key]++
				break
			}
		}
	}
	for key, n := range evicted {
		if n < runs/k-180 || n > runs/k+180 { // about 6 standard deviations
			t.Errorf("key %d (inserted %d-th) evicted %d times in %d runs, want about %d", key, key+1, n, runs, runs/k)
		}
	}
}
