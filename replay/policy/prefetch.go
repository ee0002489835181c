package policy

import (
	"unsafe"

	pf "github.com/crawltrace/crawltrace/internal/prefetch"
)

// prefetch asks the processor to bring the cache line at p into its caches
// without waiting for it (a prefetch instruction, see internal/prefetch):
// unlike a load, it never stalls the instructions after it. p must point
// into memory the caller keeps alive.
func prefetch(p unsafe.Pointer) {
	a := [1]uintptr{uintptr(p)}
	pf.Addrs(a[:])
}
