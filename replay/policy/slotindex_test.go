package policy

import "testing"

// TestSlotIndex drives a slotIndex over a slot array the way a cache that
// replaces keys in place does (fill, then replace random slots, with
// rebuilds as the stale entries pile up) and checks every lookup against a
// Go map from key to slot, for keys that hash alike in their low bits too.
func TestSlotIndex(t *testing.T) {
	for _, tc := range []struct {
		size  int
		u     uint64
		shift uint
	}{{1, 5, 0}, {3, 10, 0}, {100, 300, 0}, {5000, 20000, 0}, {5000, 20000, 40}, {1000, 1500, 52}} {
		r := splitmix{uint64(tc.size) + tc.u}
		x := newSlotIndex(tc.size)
		var keys []uint64
		where := map[uint64]int{}
		rebuilds := 0
		for i := 0; i < 200000; i++ {
			k := (r.next() % tc.u) << tc.shift
			s, free, ok := x.find(k, keys)
			ws, wok := where[k]
			if ok != wok || (ok && s != ws) {
				t.Fatalf("size %d op %d: find(%d) = %d,%v, map says %d,%v", tc.size, i, k, s, ok, ws, wok)
			}
			if ok {
				continue
			}
			if x.slots[free] != 0 {
				t.Fatalf("size %d op %d: find(%d) gave table slot %d, which is not free", tc.size, i, k, free)
			}
			if len(keys) < tc.size {
				x.add(k, keys)
				where[k] = len(keys)
				keys = append(keys, k)
				continue
			}
			v := r.intn(tc.size)
			delete(where, keys[v])
			keys[v] = k
			where[k] = v
			x.putAt(free, k, v)
			if x.needsRebuild() {
				x.rebuild(keys)
				rebuilds++
				if x.used != len(keys) || len(x.slots) != slotIndexSlots(tc.size) {
					t.Fatalf("size %d op %d: after a rebuild %d entries in %d slots, want %d in %d",
						tc.size, i, x.used, len(x.slots), len(keys), slotIndexSlots(tc.size))
				}
			}
			if 2*x.used > len(x.slots) {
				t.Fatalf("size %d op %d: %d entries in %d table slots", tc.size, i, x.used, len(x.slots))
			}
		}
		if tc.u > 2*uint64(tc.size) && rebuilds == 0 {
			t.Errorf("size %d: no rebuild in 200000 operations", tc.size)
		}
		for k, s := range where {
			if got, _, ok := x.find(k, keys); !ok || got != s {
				t.Fatalf("size %d: final find(%d) = %d,%v, want %d", tc.size, k, got, ok, s)
			}
		}
	}
}

// refRandomMap is refRandom with a map from key to slot, fast enough for
// caches of 10^5 keys: the same victims (slot rng.intn(size) once full).
type refRandomMap struct {
	size  int
	slots []uint64
	where map[uint64]int
	rng   splitmix
}

func (r *refRandomMap) access(k uint64) bool {
	if _, ok := r.where[k]; ok {
		return true
	}
	if len(r.slots) < r.size {
		r.where[k] = len(r.slots)
		r.slots = append(r.slots, k)
		return false
	}
	v := r.rng.intn(r.size)
	delete(r.where, r.slots[v])
	r.slots[v] = k
	r.where[k] = v
	return false
}

// TestRandomLargeAgainstReference checks RANDOM hit by hit against the
// reference model at sizes where AccessBatch looks keys up inline and
// loads ahead (from 2^14 keys), around randomIndexMax (the largest cache
// with a slot index) and above it, over enough requests for many rebuilds
// of the index.
func TestRandomLargeAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("large caches")
	}
	for _, size := range []int{1 << 14, randomIndexMax, randomIndexMax + 1} {
		trace := randomTrace(uint64(size), max(1500000, 8*size), 3*size, 1.3, true)
		p := NewRandom(size, 11)
		ref := &refRandomMap{size: size, where: map[uint64]int{}, rng: splitmix{11}}
		misses := 0
		for lo := 0; lo < len(trace); lo += 50000 {
			keys := trace[lo:min(lo+50000, len(trace))]
			want := oneByOneHits(ref.access, keys)
			misses += len(keys) - want
			if got := p.AccessBatch(keys); got != want {
				t.Fatalf("size %d, batch at %d: %d hits, reference %d", size, lo, got, want)
			}
		}
		if misses < 3*size {
			t.Errorf("size %d: only %d misses, too few evictions to test", size, misses)
		}
	}
}
