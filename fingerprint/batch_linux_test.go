package fingerprint

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

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

// A fault in the lanes, as when a mapped file is cut while read, is a
// recoverable panic under debug.SetPanicOnFault, as it is in Go code:
// condense turns it into an error naming the segment.
func TestAppendOffsetsFaultRecovers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	page := syscall.Getpagesize()
	content := make([]byte, 4*page)
	for i := range content {
		content[i] = 'a' + byte(i%26)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, len(content), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(data)
	var offs []int32
	for o := 0; o <= len(data); o += 40 {
		offs = append(offs, int32(o))
	}
	if err := os.Truncate(path, int64(page)); err != nil {
		t.Fatal(err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var addr uintptr
	func() {
		defer func() {
			if f, ok := recover().(interface{ Addr() uintptr }); ok {
				addr = f.Addr()
			}
		}()
		Default.AppendOffsets(nil, data, offs)
	}()
	base := uintptr(unsafe.Pointer(&data[0]))
	if addr < base+uintptr(page) || addr >= base+uintptr(len(data)) {
		t.Fatalf("fault at %#x, want one in the cut pages %#x..%#x", addr, base+uintptr(page), base+uintptr(len(data)))
	}
}
