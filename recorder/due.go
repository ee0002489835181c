package recorder

import "math/bits"

// DUE is the duplicate URL eliminator: an in-memory set of 64-bit URL
// fingerprints in one open-addressing table with linear probing. A slot
// holds the fingerprint itself (0 marks an empty slot; fingerprint 0 is
// stored as 1), so the table costs 8 bytes per slot. It grows by a factor
// of 1.25 when 85% full, which keeps it between about 9.4 and 12 bytes per
// URL (mean about 10.5). Slots are addressed by the high bits of
// fingerprint x size (Lemire's range reduction), so the size need not be a
// power of two.
//
// A DUE is not safe for concurrent use; the host splitter goroutine owns it.
type DUE struct {
	slots []uint64
	n     int
	limit int
}

// NewDUE returns an empty set sized for about hint fingerprints.
func NewDUE(hint int) *DUE {
	d := &DUE{}
	d.alloc(max(1024, hint*100/80))
	return d
}

func (d *DUE) alloc(size int) {
	d.slots = make([]uint64, size)
	d.limit = size * 85 / 100
}

// Len is the number of distinct fingerprints added.
func (d *DUE) Len() int { return d.n }

// Bytes is the memory held by the table.
func (d *DUE) Bytes() int { return 8 * len(d.slots) }

// Add inserts fp and reports whether it was new.
func (d *DUE) Add(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	if d.n >= d.limit {
		d.grow()
	}
	if d.insert(fp) {
		d.n++
		return true
	}
	return false
}

// Contains reports whether fp was added.
func (d *DUE) Contains(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	s := d.slots
	i, _ := bits.Mul64(fp, uint64(len(s)))
	for {
		switch s[i] {
		case fp:
			return true
		case 0:
			return false
		}
		i++
		if i == uint64(len(s)) {
			i = 0
		}
	}
}

func (d *DUE) insert(fp uint64) bool {
	s := d.slots
	i, _ := bits.Mul64(fp, uint64(len(s)))
	for {
		switch s[i] {
		case fp:
			return false
		case 0:
			s[i] = fp
			return true
		}
		i++
		if i == uint64(len(s)) {
			i = 0
		}
	}
}

func (d *DUE) grow() {
	old := d.slots
	d.alloc(len(old) + len(old)/4)
	for _, fp := range old {
		if fp != 0 {
			d.insert(fp)
		}
	}
}
