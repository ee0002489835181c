//go:build amd64 || arm64

package prefetch

// Addrs hints the CPU to load the cache line of each address into every
// cache level. The addresses need not be valid: a prefetch never faults.
// They must point into memory the caller keeps alive.
//
//go:noescape
func Addrs(addrs []uintptr)
