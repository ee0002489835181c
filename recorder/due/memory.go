package due

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
)

// Memory is the in-memory duplicate URL eliminator: a set of 64-bit URL
// fingerprints in one open-addressing table with linear probing. A slot
// holds the fingerprint itself (0 marks an empty slot; fingerprint 0 is
// stored as 1), so the table costs 8 bytes per slot. It grows by a factor
// of 1.25 when 85% full, which keeps it between about 9.4 and 12 bytes per
// URL (mean about 10.5). Slots are addressed by the high bits of
// fingerprint x size (Lemire's range reduction), so the size need not be a
// power of two.
//
// A Memory is not safe for concurrent use; the host splitter goroutine owns it.
type Memory struct {
	slots []uint64
	n     int
	limit int
}

// NewDUE returns an empty set sized for about hint fingerprints.
func NewMemory(hint int) *Memory {
	d := &Memory{}
	d.alloc(max(1024, hint*100/80))
	return d
}

func (d *Memory) alloc(size int) {
	d.slots = make([]uint64, size)
	d.limit = size * 85 / 100
}

// Len is the number of distinct fingerprints added.
func (d *Memory) Len() int { return d.n }

// Bytes is the memory held by the table.
func (d *Memory) Bytes() int { return 8 * len(d.slots) }

// Add inserts fp and reports whether it was new.
func (d *Memory) Add(fp uint64) bool {
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
func (d *Memory) Contains(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	_, found := d.find(fp)
	return found
}

func (d *Memory) insert(fp uint64) bool {
	i, found := d.find(fp)
	if !found {
		d.slots[i] = fp
	}
	return !found
}

// find probes the table for fp from its home slot on: it returns fp's
// slot, or the empty one where it would go.
func (d *Memory) find(fp uint64) (i uint64, found bool) {
	s := d.slots
	i, _ = bits.Mul64(fp, uint64(len(s)))
	for {
		switch s[i] {
		case fp:
			return i, true
		case 0:
			return i, false
		}
		i++
		if i == uint64(len(s)) {
			i = 0
		}
	}
}

func (d *Memory) grow() {
	old := d.slots
	d.alloc(len(old) + len(old)/4)
	for _, fp := range old {
		if fp != 0 {
			d.insert(fp)
		}
	}
}

// Save writes the set in the checkpoint format (see the package doc).
func (d *Memory) Save(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(d.n))
	bw.Write(b[:])
	for _, fp := range d.slots {
		if fp != 0 {
			binary.LittleEndian.PutUint64(b[:], fp)
			bw.Write(b[:])
		}
	}
	return bw.Flush()
}

// Load adds the fingerprints of a set saved by Save (of either kind).
func (d *Memory) Load(r io.Reader) error {
	return readFingerprints(r, func(fp uint64) { d.Add(fp) })
}

// Close releases nothing; it is there for [Set].
func (d *Memory) Close() error { return nil }

// readFingerprints reads a count and that many little-endian fingerprints.
func readFingerprints(r io.Reader, add func(uint64)) error {
	sr, err := newSetReader(r)
	if err != nil {
		return err
	}
	for sr.more() {
		fp, err := sr.next()
		if err != nil {
			return err
		}
		add(fp)
	}
	return nil
}

// setReader reads a saved set (the checkpoint format) one fingerprint at
// a time.
type setReader struct {
	br       *bufio.Reader
	n, total uint64 // read so far, in all
	b        [8]byte
}

func newSetReader(r io.Reader) (*setReader, error) {
	sr := &setReader{br: bufio.NewReaderSize(r, 1<<16)}
	if _, err := io.ReadFull(sr.br, sr.b[:]); err != nil {
		return nil, fmt.Errorf("due: read count: %w", err)
	}
	sr.total = binary.LittleEndian.Uint64(sr.b[:])
	return sr, nil
}

func (sr *setReader) more() bool { return sr.n < sr.total }

func (sr *setReader) next() (uint64, error) {
	if _, err := io.ReadFull(sr.br, sr.b[:]); err != nil {
		return 0, fmt.Errorf("due: read fingerprint %d of %d: %w", sr.n, sr.total, err)
	}
	sr.n++
	return binary.LittleEndian.Uint64(sr.b[:]), nil
}
