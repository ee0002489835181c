package hugemem

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestAlloc(t *testing.T) {
	for _, n := range []int{0, 100, PageSize - 1, PageSize, 3*PageSize + 5} {
		b := Alloc(n)
		m := b.Bytes()
		if len(m) != n || cap(m) != n {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(m), cap(m))
		}
		if want := n >= PageSize && runtime.GOOS == "linux"; b.Mapped() != want {
			t.Errorf("Alloc(%d): mapped %v, want %v", n, b.Mapped(), want)
		}
		if b.Mapped() && addr(m)%PageSize != 0 {
			t.Errorf("Alloc(%d) at %#x: not at a huge-page boundary", n, addr(m))
		}
		for i := range m {
			if m[i] != 0 {
				t.Fatalf("Alloc(%d): byte %d is %d, not zero", n, i, m[i])
			}
			m[i] = byte(i)
		}
		for i := range m {
			if m[i] != byte(i) {
				t.Fatalf("Alloc(%d): byte %d reads %d", n, i, m[i])
			}
		}
		b.Free()
		b.Free() // a second Free does nothing
		if b.Bytes() != nil {
			t.Errorf("Alloc(%d): bytes still set after Free", n)
		}
	}
}

// TestUnreachableFreed: a block never freed is unmapped once unreachable.
func TestUnreachableFreed(t *testing.T) {
	var freed []*mapping
	for range 4 {
		b := Alloc(PageSize)
		if !b.Mapped() {
			t.Skip("no mapped blocks here")
		}
		b.Bytes()[0] = 1
		freed = append(freed, b.own)
	}
	for range 50 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		done := 0
		for _, o := range freed {
			if o.done() {
				done++
			}
		}
		if done == len(freed) {
			return
		}
	}
	t.Fatal("unreachable blocks were not unmapped")
}

// Reserve maps the whole size asked, however large, without backing it:
// only what is written is resident.
func TestReserve(t *testing.T) {
	n := int(min(64<<30, math.MaxInt/2)) // beyond this machine's memory, most likely (1 GiB on 32 bits)
	b := Reserve(n, 64<<20)
	defer b.Free()
	m := b.Bytes()
	if !b.Mapped() {
		if runtime.GOOS == "linux" {
			t.Fatalf("Reserve(%d): not mapped", n)
		}
		if len(m) != maxHeapReserve {
			t.Fatalf("Reserve(%d) in Go memory: %d bytes", n, len(m))
		}
		return
	}
	if len(m) < 64<<20 || len(m) > n {
		t.Fatalf("Reserve(%d): %d bytes", n, len(m))
	}
	for _, off := range []int{0, len(m) / 2, len(m) - 1} {
		if m[off] != 0 {
			t.Fatalf("byte %d not zero", off)
		}
		m[off] = 7
	}
	if m[len(m)/2] != 7 {
		t.Fatal("a written byte does not read back")
	}
}
