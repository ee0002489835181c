package tracefile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestDirectWriterContent writes pieces of every size across buffer
// boundaries, with buffers of each size a caller may ask for, and checks
// the file holds exactly what was written.
func TestDirectWriterContent(t *testing.T) {
	for _, bufSize := range []int{directBuf, 1, 100_000} {
		t.Run(fmt.Sprint(bufSize), func(t *testing.T) { testDirectWriterContent(t, bufSize) })
	}
}

func testDirectWriterContent(t *testing.T, bufSize int) {
	buf := max(bufSize, minDirectBuf) // rounded up: 100,000 to 102,400
	buf = (buf + directAlign - 1) / directAlign * directAlign
	for _, size := range []int{0, 1, directAlign - 1, directAlign, buf, buf + 1, 3*buf + 5000, 9 * buf} {
		path := filepath.Join(t.TempDir(), "f")
		w, err := createDirect(path, bufSize)
		if err != nil {
			t.Fatal(err)
		}
		if cap(w.buf) != buf {
			t.Fatalf("asked for %d-byte buffers: got %d, want %d", bufSize, cap(w.buf), buf)
		}
		want := make([]byte, size)
		rng := rand.New(rand.NewPCG(uint64(size), 1))
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		for p := want; len(p) > 0; {
			k := min(len(p), 1+rng.IntN(300000))
			if n, err := w.Write(p[:k]); err != nil || n != k {
				t.Fatalf("write: %d, %v", n, err)
			}
			p = p[k:]
		}
		if err := w.finish(); err != nil {
			t.Fatal(err)
		}
		w.File().Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("size %d: file of %d bytes differs at %d", size, len(got), i)
		}
	}
}

// TestDirectWriterFallback has every direct write refused, as a file
// system without direct I/O for some writes would: the writer goes on
// through the page cache and the file is whole.
func TestDirectWriterFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	w, err := createDirect(path, directBuf)
	if err != nil {
		t.Fatal(err)
	}
	if !w.direct {
		t.Skip("no direct I/O on this file system")
	}
	// Misalign the next write's offset: O_DIRECT refuses it with EINVAL.
	w.off = 1
	want := bytes.Repeat([]byte("crawltrace"), directBuf/5)
	if _, err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	w.File().Close()
	if w.direct {
		t.Error("still writing directly after a refusal")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1+len(want) || !bytes.Equal(got[1:], want) {
		t.Errorf("file of %d bytes, want %d after a hole of 1", len(got), 1+len(want))
	}
}
