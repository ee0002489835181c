package fingerprint

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// The lanes read nothing outside data: strings packed up against an
// inaccessible page on either side hash without a fault.
func TestAppendOffsetsBetweenGuardPages(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[3*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	data := mem[page : 3*page]
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		var offs []int32
		for o := 0; ; {
			offs = append(offs, int32(o))
			n := 8 + r.IntN(150)
			if trial%2 == 1 {
				n = 8 + r.IntN(30)
			}
			if o+n > len(data) {
				break
			}
			o += n
		}
		// The last string ends at the guard page.
		offs[len(offs)-1] = int32(len(data))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		got := Default.AppendOffsets(nil, data, offs)
		for i := range got {
			if want := xxhash.Sum64(data[offs[i]:offs[i+1]]); got[i] != want {
				t.Fatalf("trial %d: string %d = %#016x, want %#016x", trial, i, got[i], want)
			}
		}
	}
}
