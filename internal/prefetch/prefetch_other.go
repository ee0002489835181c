//go:build !amd64 && !arm64

package prefetch

// Addrs does nothing on this architecture.
func Addrs(addrs []uintptr) {}
