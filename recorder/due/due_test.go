package due

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// A Disk DUE, with merges every few hundred fingerprints, admits exactly
// what the in-memory table admits, and either loads what the other saved.
func TestDiskMatchesMemory(t *testing.T) {
	for _, cache := range []int{0, 16, 1000} {
		d, err := NewDisk(DiskConfig{Dir: t.TempDir(), CacheSize: cache, BufferSize: 300})
		if err != nil {
			t.Fatal(err)
		}
		m := NewMemory(16)
		rng := rand.New(rand.NewPCG(1, uint64(cache)))
		for i := 0; i < 50000; i++ {
			fp := (1 + rng.Uint64N(20000)) * 0x9e3779b97f4a7c15 // repeats, spread over the range
			if i%7 == 0 {
				fp = 2 + uint64(rng.IntN(50)) // small, popular (Memory stores 0 as 1)
			}
			if a, b := d.Add(fp), m.Add(fp); a != b {
				t.Fatalf("cache %d: add %d (#%d): disk %v, memory %v", cache, fp, i, a, b)
			}
		}
		if d.Err() != nil || d.Len() != m.Len() {
			t.Fatalf("cache %d: disk %d fingerprints (%v), memory %d", cache, d.Len(), d.Err(), m.Len())
		}
		st := d.Stats()
		if st.Merges == 0 || st.MergeBytes == 0 || (cache > 0 && (st.CacheHits == 0 || st.CacheAccesses != 50000)) {
			t.Errorf("cache %d: stats %+v", cache, st)
		}
		var saved bytes.Buffer
		if err := d.Save(&saved); err != nil {
			t.Fatal(err)
		}
		m2 := NewMemory(16)
		if err := m2.Load(bytes.NewReader(saved.Bytes())); err != nil || m2.Len() != m.Len() {
			t.Fatalf("memory loaded %d of %d: %v", m2.Len(), m.Len(), err)
		}
		saved.Reset()
		m.Save(&saved)
		d2, _ := NewDisk(DiskConfig{Dir: t.TempDir(), BufferSize: 1000})
		if err := d2.Load(&saved); err != nil || d2.Len() != m.Len() {
			t.Fatalf("disk loaded %d of %d: %v", d2.Len(), m.Len(), err)
		}
		for i := 1; i < 20000; i++ {
			if d2.Add(uint64(i)*0x9e3779b97f4a7c15) != m.Add(uint64(i)*0x9e3779b97f4a7c15) {
				t.Fatalf("after load: fingerprint %d differs", i)
			}
		}
		d.Close()
		d2.Close()
	}
}
