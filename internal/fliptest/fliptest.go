// Package fliptest holds the single-bit flip test that every kind of file
// crawltrace reads back is put through: flip one bit, read the file, and
// require an error that marks the file as bad input and names it; and
// the one flip a test makes at a place it names ([First], [Last]). It is
// a test helper: only _test.go files import it.
package fliptest

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Stride is the distance between the bits [EveryBit] flips in a file of
// n bytes: an odd number (so every bit position of a byte is tried)
// giving about 1,500 flips, 300 in -short mode; 1, every bit, for a
// small file.
func Stride(n int) int {
	most := 1500
	if testing.Short() {
		most = 300
	}
	s := 8 * n / most
	if s <= 1 {
		return 1
	}
	return s | 1
}

// EveryBit writes good to path, checks that check accepts it, then flips
// every stride-th bit of the file in turn, calling check after each
// flip, and fails t unless check returns a one-line error that marked
// reports as a bad input file and that names path: no single-bit flip
// is accepted silently. It leaves path holding good.
func EveryBit(t testing.TB, path string, good []byte, stride int, marked func(error) bool, check func() error) {
	t.Helper()
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := check(); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	accepted, tried := 0, 0
	for bit := 0; bit < 8*len(good); bit += stride {
		i := bit / 8
		if _, err := f.WriteAt([]byte{good[i] ^ 1<<(bit%8)}, int64(i)); err != nil {
			t.Fatal(err)
		}
		tried++
		err := check()
		switch {
		case err == nil:
			if accepted++; accepted <= 5 {
				t.Errorf("bit %d of byte %d (of %d) flipped: accepted", bit%8, i, len(good))
			}
		case !marked(err):
			t.Fatalf("byte %d: error not marked as a bad input file: %v", i, err)
		case !strings.Contains(err.Error(), path):
			t.Fatalf("byte %d: error does not name the file: %v", i, err)
		case strings.Contains(err.Error(), "\n"):
			t.Fatalf("byte %d: error of more than one line: %q", i, err)
		}
		if _, err := f.WriteAt(good[i:i+1], int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if accepted > 0 {
		t.Errorf("%d of %d single-bit flips accepted", accepted, tried)
	}
}

// First flips the lowest bit of the byte off bytes into the first
// occurrence of what in the file at path, which keeps its size, and
// returns what writes the file back as it was. It fails t when the file
// cannot be read or written or does not hold what.
func First(t testing.TB, path, what string, off int) (restore func()) {
	t.Helper()
	return flipAt(t, path, what, off, bytes.Index)
}

// Last is [First] at the last occurrence of what.
func Last(t testing.TB, path, what string, off int) (restore func()) {
	t.Helper()
	return flipAt(t, path, what, off, bytes.LastIndex)
}

func flipAt(t testing.TB, path, what string, off int, index func(s, sep []byte) int) (restore func()) {
	t.Helper()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := index(good, []byte(what))
	if i < 0 || off < 0 || i+off >= len(good) {
		t.Fatalf("%s: no %q with a byte %d bytes into it", path, what, off)
	}
	bad := bytes.Clone(good)
	bad[i+off] ^= 1
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := os.WriteFile(path, good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Fuzz is the fuzz target of a file crawltrace reads back: it adds good
// (the file as written) to f's inputs, then writes each input to path
// and calls read, which reads the file back, failing t where it accepted
// what it must not, and returns its error; an error that marked does not
// report as a bad input file fails t.
func Fuzz(f *testing.F, path string, good []byte, marked func(error) bool, read func(t *testing.T, data []byte) error) {
	f.Helper()
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := read(t, data); err != nil && !marked(err) {
			t.Fatalf("error not marked as a bad input file: %v", err)
		}
	})
}
