// Package hugemem allocates large, pointer-free blocks of memory outside
// the Go heap, asking the kernel to back them with transparent huge pages
// (2 MiB) where it offers them only on request (Linux's "madvise" mode, a
// common default). A hash table of a few hundred megabytes touched at
// random then costs one page fault and one TLB entry per 2 MiB instead of
// per 4 KiB: on the crawl-like 50M trace of docs/benchmarks.md a condense
// took 90,000 page faults with its table on small pages and 11,000-14,500
// with it on huge ones (the rest are the input's and the traces'), and
// 10.1 instead of 11.3 CPU seconds.
//
// A Block is freed by Free, or, if it is never freed, once it is
// unreachable. Memory that is never touched is never backed. Where huge
// pages or mmap are not available a Block is ordinary Go memory.
package hugemem

import (
	"runtime"
	"sync"
	"unsafe"
)

// PageSize is the size of a huge page, the alignment of a mapped block.
const PageSize = 2 << 20

// Block is one allocation. Its bytes are zero when allocated.
type Block struct {
	b   []byte
	own *mapping // nil for Go memory
}

// mapping is a block's whole mapping; its cleanup's argument.
type mapping struct {
	mu sync.Mutex
	m  []byte
}

// Alloc returns a block of n bytes. Blocks smaller than a huge page, and
// any block where mapping fails, are Go memory.
func Alloc(n int) *Block {
	if n < PageSize {
		return &Block{b: make([]byte, n)}
	}
	if b, m := mapHuge(n); b != nil {
		return mapped(b, m)
	}
	return &Block{b: make([]byte, n)}
}

// mapped is the block of b, a window of mapping m, unmapped by Free or
// once the block is unreachable.
func mapped(b, m []byte) *Block {
	blk := &Block{b: b, own: &mapping{m: m}}
	runtime.AddCleanup(blk, func(o *mapping) { o.free() }, blk.own)
	return blk
}

// Reserve returns a block of at most n bytes and at least least (or of
// n, if smaller), for a table that grows into it: memory is backed only
// where it is written, so reserving its whole limit costs nothing until
// it is used. Where so large a mapping is refused (strict overcommit), it
// tries half as much, down to least; where nothing can be mapped, the
// block is Go memory of min(n, maxHeapReserve) bytes.
func Reserve(n, least int) *Block {
	for m := n; m >= PageSize; m /= 2 {
		if b, mp := mapHuge(m); b != nil {
			return mapped(b, mp)
		}
		if m/2 < least {
			break
		}
	}
	return &Block{b: make([]byte, min(n, maxHeapReserve))}
}

// maxHeapReserve is the largest block Reserve takes from the Go heap.
const maxHeapReserve = 1 << 30

// Bytes is the block's memory, valid until Free.
func (b *Block) Bytes() []byte { return b.b }

// Mapped reports whether the block is outside the Go heap.
func (b *Block) Mapped() bool { return b.own != nil }

// Free returns the block's memory at once. Nothing may use its bytes
// afterwards.
func (b *Block) Free() {
	if b.own != nil {
		b.own.free()
	}
	b.b = nil
}

func (o *mapping) free() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m != nil {
		unmap(o.m)
		o.m = nil
	}
}

func (o *mapping) done() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m == nil
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
