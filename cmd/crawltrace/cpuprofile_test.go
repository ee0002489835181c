package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// CRAWLTRACE_CPUPROFILE's file is a gzip-compressed pprof profile once the
// run ends; a path that cannot be created is an error naming the variable.
func TestStartCPUProfile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpu.prof")
	stop, err := startCPUProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 1 << 20 {
		x += i * i
	}
	_ = x
	stop()
	b, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("profile file: %d bytes, err %v; want a gzip stream", len(b), err)
	}
	if _, err := startCPUProfile(filepath.Join(dir, "no", "such", "dir", "cpu.prof")); err == nil || !bytes.Contains([]byte(err.Error()), []byte("CRAWLTRACE_CPUPROFILE")) {
		t.Errorf("uncreatable path: %v, want an error naming CRAWLTRACE_CPUPROFILE", err)
	}
	stop, err = startCPUProfile("")
	if err != nil {
		t.Fatal(err)
	}
	stop()
}
