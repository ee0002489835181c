package prefetch

import (
	"testing"
	"unsafe"
)

// A prefetch hint never faults, whatever the address, and changes no
// memory.
func TestAddrsNeverFaults(t *testing.T) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	base := uintptr(unsafe.Pointer(&buf[0]))
	addrs := []uintptr{0, 1, base, base + 4095, base + uintptr(len(buf)) - 1, ^uintptr(0), ^uintptr(0) &^ 4095, 0xdead0000}
	Addrs(nil)
	Addrs(addrs[:0])
	Addrs(addrs)
	for i := range buf {
		if buf[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
}
