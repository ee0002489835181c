package tracefile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A reader restricted to a range that holds a corrupt batch (framing
// intact, a body that fails to decode) stops there as an unrestricted
// reader does, with the same error (the batch counted from the segment's
// start), and reports the segment's end; a range after it still reads its
// batches (a sharded condense's merge drops them).
func TestRestrictStopsAtCorruptBatch(t *testing.T) {
	const per, batches, bad = 100, 5, 3
	dir := NodeDir(t.TempDir(), 0)
	w, err := CreateURLWriter(dir, testMeta(0), WriterConfig{FlushRows: per, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64 // where each batch ends
	for i, r := range genURLs(per*batches, 3) {
		if _, err := w.Append(r); err != nil {
			t.Fatal(err)
		}
		if (i+1)%per == 0 {
			ends = append(ends, w.Segments()[0].Bytes)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, w.Segments()[0].File)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	starts := append([]int64{8 + int64(int32(binary.LittleEndian.Uint32(b[4:])))}, ends[:batches-1]...)
	// Batch bad's body: seq and time (8 bytes a row each), then the url
	// column's offsets, made negative.
	off := starts[bad]
	body := off + 8 + int64(int32(binary.LittleEndian.Uint32(b[off+4:])))
	for i := body; i < body+16*per+64+4*(per+1); i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	size := int64(len(b))
	for _, raw := range []bool{false, true} {
		read := func(lo, hi int64, restrict bool) (SegmentInfo, bool, int64) {
			s, err := OpenSegment(path, KindURLs)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if restrict {
				s.Restrict(lo, hi)
			}
			if raw {
				for s.NextURLs() {
				}
			} else {
				for s.Next() {
				}
			}
			return s.Info(), s.Tail(), s.RowsBefore()
		}
		whole, tail, _ := read(0, 0, false)
		if whole.Clean || !strings.HasPrefix(whole.Error, "corrupt batch 3: ") || whole.Rows != bad*per || !tail {
			t.Fatalf("raw=%v: unrestricted reader: %+v, tail %v", raw, whole, tail)
		}
		for _, c := range []struct {
			lo, hi        int64
			rows, before  int64
			cut, wantTail bool
			what          string
		}{
			{0, starts[2], 2 * per, 0, false, false, "before the corrupt batch"},
			{starts[2], starts[4], per, 2 * per, true, true, "holding the corrupt batch"},
			{starts[bad] + 1, size, per, (bad + 1) * per, false, true, "after the corrupt batch"},
		} {
			info, tail, before := read(c.lo, c.hi, true)
			if info.Rows != c.rows || before != c.before || tail != c.wantTail || info.Clean == c.cut {
				t.Errorf("raw=%v: range %s: %+v, tail %v, %d rows before", raw, c.what, info, tail, before)
			}
			if c.cut && info.Error != whole.Error {
				t.Errorf("raw=%v: range %s: error %q, unrestricted %q", raw, c.what, info.Error, whole.Error)
			}
		}
	}
}
