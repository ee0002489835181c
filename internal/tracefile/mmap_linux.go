package tracefile

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapRange maps n bytes of f from off read-only (pages are faulted in as
// they are read, many at a time: measured a little faster than
// MAP_POPULATE, which set up every page table entry in the call). It returns the bytes and the
// mapping to release with unmapRange; ok is false when the file cannot be
// mapped (the caller then reads it).
func mapRange(f *os.File, off, n int64) (b, mapping []byte, ok bool) {
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	m, err := unix.Mmap(int(f.Fd()), start, int(off-start+n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return m[off-start:], m, true
}

func unmapRange(m []byte) { _ = unix.Munmap(m) }
