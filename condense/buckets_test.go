package condense

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// A bucket file gives back each range's records, in order, whatever the
// block size; a cut or overwritten file is refused naming it. With a memory
// allowance, the blocks within it are kept in memory and the rest written,
// and each range's records come back all the same.
func TestBucketFileRoundTrip(t *testing.T) {
	for _, blk := range []int{1, 100, 4096} {
		for _, keep := range []int64{-1, 0, 30000, 1 << 30} {
			testBucketRoundTrip(t, blk, keep)
		}
	}
}

func testBucketRoundTrip(t *testing.T, blk int, keep int64) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, bucketFileName(0))
	w, err := newBucketWriter(path, 7, blk)
	if err != nil {
		t.Fatal(err)
	}
	if keep >= 0 {
		w.mem = newMemAllowance(keep)
	}
	want := map[int][]string{}
	var head [10]byte
	for i := 0; i < 3000; i++ {
		g := (i * 5) % 7
		u := fmt.Sprintf("http://h%d.test/%d", g, i)
		if i%17 == 0 {
			// Longer than a staged record may be: appended to the
			// block after the range's staged records.
			u += strings.Repeat("p", 200+i%50)
		}
		binary.LittleEndian.PutUint64(head[:], uint64(i))
		binary.LittleEndian.PutUint16(head[8:], uint16(g))
		if err := w.write(g, head[:], u); err != nil {
			t.Fatal(err)
		}
		want[g] = append(want[g], u)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	rc, err := readBuckets(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kept, written int
	for g := range 7 {
		kept += len(w.kept[g])
		written += len(rc[g])
	}
	switch {
	case keep < 0 || keep == 0:
		if kept != 0 {
			t.Fatalf("blk %d, allowance %d: %d blocks kept", blk, keep, kept)
		}
	case keep == 1<<30:
		if written != 0 {
			t.Fatalf("blk %d, allowance %d: %d blocks written", blk, keep, written)
		}
	default:
		if kept == 0 || written == 0 {
			t.Fatalf("blk %d, allowance %d: %d blocks kept and %d written, want some of each", blk, keep, kept, written)
		}
	}
	rc.add(w.kept)
	for g := 0; g < 7; g++ {
		var got []string
		for _, c := range rc[g] {
			err := scanChunk(c, func(rec []byte) error {
				_, node, u, _, err := decodeRec(rec, 0)
				if err != nil {
					return err
				}
				if int(node) != g {
					return fmt.Errorf("record of range %d in range %d", node, g)
				}
				got = append(got, string(u))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if keep > 0 {
			// Kept blocks come before written ones: the order within a
			// range is not kept, only its records.
			slices.Sort(got)
			want[g] = slices.Sorted(slices.Values(want[g]))
		}
		if strings.Join(got, " ") != strings.Join(want[g], " ") {
			t.Fatalf("blk %d, allowance %d, range %d: %d records back, want %d", blk, keep, g, len(got), len(want[g]))
		}
	}
	full, _ := os.ReadFile(path)
	for _, bad := range [][]byte{nil, full[:len(full)-1], full[:len(full)-bucketFooter], append(append([]byte(nil), full[:len(full)-8]...), "garbage!"...)} {
		os.WriteFile(path, bad, 0o644)
		if _, err := readBuckets(dir); !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("damaged bucket file (%d bytes): %v", len(bad), err)
		}
	}
}
