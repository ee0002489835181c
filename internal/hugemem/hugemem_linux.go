package hugemem

import "golang.org/x/sys/unix"

// mapHuge maps n bytes (rounded up to huge pages) at a huge-page boundary
// and advises huge pages for them. The mapping reserves no swap: pages are
// backed as they are written. It returns the block and the whole
// mapping, or nils.
func mapHuge(n int) (b, m []byte) {
	size := (n + PageSize - 1) &^ (PageSize - 1)
	raw, err := unix.Mmap(-1, 0, size+PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil, nil
	}
	// Keep the aligned part only. unix.Munmap wants the slice Mmap gave,
	// so the mapping is kept whole and the block is a window of it; the
	// unaligned head and tail are never touched, so never backed.
	off := 0
	if r := addr(raw) % PageSize; r != 0 {
		off = int(PageSize - r)
	}
	m = raw
	b = raw[off : off+size : off+size]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint: without it, small pages
	return b[:n:n], m
}

func unmap(m []byte) { _ = unix.Munmap(m) }
