package due

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// newDisk opens a Disk with c in a fresh directory of the test and closes
// it when the test ends.
func newDisk(t *testing.T, c DiskConfig) *Disk {
	t.Helper()
	c.Dir = t.TempDir()
	d, err := NewDisk(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A Disk DUE, with merges every few hundred fingerprints, admits exactly
// what the in-memory table admits, and either loads what the other saved.
func TestDiskMatchesMemory(t *testing.T) {
	for _, cache := range []int{0, 16, 1000} {
		d := newDisk(t, DiskConfig{CacheSize: cache, BufferSize: 300})
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
		d2 := newDisk(t, DiskConfig{BufferSize: 1000})
		if err := d2.Load(&saved); err != nil || d2.Len() != m.Len() {
			t.Fatalf("disk loaded %d of %d: %v", d2.Len(), m.Len(), err)
		}
		for i := 1; i < 20000; i++ {
			if d2.Add(uint64(i)*0x9e3779b97f4a7c15) != m.Add(uint64(i)*0x9e3779b97f4a7c15) {
				t.Fatalf("after load: fingerprint %d differs", i)
			}
		}
	}
}

// A sorted saved set (as Disk saves it) loads in one pass, however small
// the buffer, into a Disk that already holds some of it: the result is
// the union, each fingerprint once.
func TestDiskLoadSortedOnePass(t *testing.T) {
	src := newDisk(t, DiskConfig{BufferSize: 1000})
	for i := uint64(1); i <= 20000; i++ {
		src.Add(i * 0x9e3779b97f4a7c15)
	}
	var saved bytes.Buffer
	if err := src.Save(&saved); err != nil {
		t.Fatal(err)
	}
	d := newDisk(t, DiskConfig{BufferSize: 100})
	// Some already there (on disk and in the buffer), some new.
	for i := uint64(19950); i <= 20100; i++ {
		d.Add(i * 0x9e3779b97f4a7c15)
	}
	before := d.Stats().Merges
	if err := d.Load(&saved); err != nil {
		t.Fatal(err)
	}
	if m := d.Stats().Merges - before; m > 2 {
		t.Errorf("loading 20,000 sorted fingerprints took %d merges with a buffer of 100, want at most 2 (the buffer, then the set)", m)
	}
	if d.Len() != 20100 {
		t.Errorf("Len %d after load, want 20100", d.Len())
	}
	for i := uint64(1); i <= 20100; i++ {
		if d.Add(i * 0x9e3779b97f4a7c15) {
			t.Fatalf("fingerprint %d lost in the load", i)
		}
	}
	if next := uint64(20101); !d.Add(next * 0x9e3779b97f4a7c15) {
		t.Error("a new fingerprint was not admitted after the load")
	}
	// A damaged set (cut short) is an error.
	saved.Reset()
	src.Save(&saved)
	d2 := newDisk(t, DiskConfig{})
	if err := d2.Load(bytes.NewReader(saved.Bytes()[:saved.Len()-5])); err == nil {
		t.Error("a cut set loaded without an error")
	}
}
