//go:build !linux

package hugemem

func mapHuge(n int) (b, m []byte) { return nil, nil }

func unmap(m []byte) {}
