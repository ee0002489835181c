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

// pageSize is the system's page size.
var pageSize = int64(os.Getpagesize())

// dropPages gives back the pages of b, part of a file mapping: they stay
// in the page cache, and reading them maps them again.
func dropPages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
