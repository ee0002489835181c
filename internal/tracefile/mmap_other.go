//go:build !linux

package tracefile

import "os"

func mapRange(f *os.File, off, n int64) (b, mapping []byte, ok bool) { return nil, nil, false }

func unmapRange(m []byte) {}

const pageSize = 4096

func dropPages(b []byte) {}
