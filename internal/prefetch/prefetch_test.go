package prefetch

import (
	"fmt"
	"math/rand/v2"
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

// BenchmarkRandomLoads measures this machine's cost of one random 8-byte
// load from tables of several sizes, with every load of a block of 32
// independent (so the CPU overlaps their misses) and, with pf, prefetched
// one block ahead: the floor under a hash-table lookup per row.
func BenchmarkRandomLoads(b *testing.B) {
	for _, size := range []int{512 << 10, 8 << 20, 256 << 20} {
		for _, pf := range []bool{false, true} {
			b.Run(fmt.Sprintf("table=%dKiB/prefetch=%v", size>>10, pf), func(b *testing.B) {
				buf := make([]uint64, size/8)
				rng := rand.New(rand.NewPCG(1, 2))
				idx := make([]uint32, 1<<20)
				for i := range idx {
					idx[i] = uint32(rng.IntN(len(buf)))
				}
				base := uintptr(unsafe.Pointer(&buf[0]))
				addrs := make([]uintptr, 0, 32)
				var sum uint64
				b.ResetTimer()
				for n := 0; n < b.N; n++ {
					for i := 0; i+32 <= len(idx); i += 32 {
						if pf && i+64 <= len(idx) {
							addrs = addrs[:0]
							for _, k := range idx[i+32 : i+64] {
								addrs = append(addrs, base+uintptr(k)*8)
							}
							Addrs(addrs)
						}
						for _, k := range idx[i : i+32] {
							sum += buf[k]
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(idx)), "ns/load")
				sink = sum
			})
		}
	}
}

var sink uint64
