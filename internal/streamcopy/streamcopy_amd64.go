package streamcopy

import "unsafe"

const haveAsm = true

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// lines copies n bytes (a multiple of 64, n > 0) from src to dst, 16-byte
// aligned, with MOVNTDQ.
//
//go:noescape
func lines(dst, src *byte, n int)

// Fence orders the non-temporal stores made so far before every later
// store and load (SFENCE).
func Fence()
