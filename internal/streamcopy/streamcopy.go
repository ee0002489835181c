// Package streamcopy copies bytes to memory that will not be read again
// soon with non-temporal stores: the destination's cache lines are
// written whole, past the caches, without being read first. A scatter of
// records into many partitions' buffers (the spill of condense) otherwise
// reads every line it writes from memory, and evicts the lines it will
// write next. On architectures without an assembly version, [Lines] is
// an ordinary copy and [Fence] does nothing.
//
// Stores made by [Lines] are weakly ordered: call [Fence] before the
// destination is handed to another goroutine, written to a file, or read
// by anything but the goroutine that wrote it. A goroutine moved to
// another thread or core in between loses nothing: the move passes
// through locked instructions or an interrupt on the core it leaves,
// each of which drains that core's write-combining buffers (as SFENCE
// does).
package streamcopy

// Lines copies src to dst, whose lengths must be equal and a multiple of
// 64, with non-temporal stores where dst is 16-byte aligned (else it
// copies as copy does). It returns the bytes copied.
func Lines(dst, src []byte) int {
	n := len(src)
	if len(dst) != n || n%64 != 0 {
		panic("streamcopy: lengths not equal or not whole lines")
	}
	if n == 0 {
		return 0
	}
	if !haveAsm || uintptrOf(dst)%16 != 0 {
		return copy(dst, src)
	}
	lines(&dst[0], &src[0], n)
	return n
}
