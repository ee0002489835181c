package policy

import "unsafe"

// prefetch asks the processor to bring the cache line at p into its caches
// without waiting for it (PREFETCHT0): unlike a load, it never stalls the
// instructions after it.
//
//go:noescape
func prefetch(p unsafe.Pointer)
