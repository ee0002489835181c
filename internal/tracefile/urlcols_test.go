package tracefile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// colRows is what a condense reads of a segment: (url, dest) per row, with
// the segment's final state.
type colRows struct {
	URLs  []string
	Dests []uint16
	Info  SegmentInfo
	Err   string // OpenSegment's error
}

// readCols reads path with NextURLs when fast, else with Next.
func readCols(t testing.TB, path string, fast bool) colRows {
	t.Helper()
	var out colRows
	s, err := OpenSegment(path, KindURLs)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBadInput) {
			t.Fatalf("unmarked error %v", err)
		}
		out.Err = err.Error()
		return out
	}
	defer s.Close()
	if fast {
		for s.NextURLs() {
			c := s.URLColumns()
			for i := 0; i < c.Len(); i++ {
				out.URLs = append(out.URLs, string([]byte(c.URL(i))))
				out.Dests = append(out.Dests, c.Dest[i])
			}
		}
	} else {
		for s.Next() {
			b := NewURLBatch(s.Record())
			for i := 0; i < b.Len(); i++ {
				r := b.Row(i)
				out.URLs = append(out.URLs, r.URL)
				out.Dests = append(out.Dests, r.Dest)
			}
		}
	}
	out.Info = s.Info()
	return out
}

func sameCols(t testing.TB, path, what string) colRows {
	t.Helper()
	slow, fast := readCols(t, path, false), readCols(t, path, true)
	// The readers word a corrupt batch differently; both must say why.
	se, fe := slow.Info.Error, fast.Info.Error
	if se != "" && fe != "" {
		slow.Info.Error, fast.Info.Error = "", ""
	}
	if !reflect.DeepEqual(slow, fast) {
		slow.Info.Error, fast.Info.Error = se, fe
		_ = se
		t.Fatalf("%s: NextURLs differs from Next:\nNext     %d rows, %+v %q\nNextURLs %d rows, %+v %q", what, len(slow.URLs), slow.Info, slow.Err, len(fast.URLs), fast.Info, fast.Err)
	}
	return fast
}

// NextURLs yields exactly the rows and segment states Next does: whole,
// rotated, compressed and empty segments, cuts at every kind of offset,
// 0-byte files.
func TestNextURLsMatchesNext(t *testing.T) {
	for _, m := range []struct {
		name      string
		min, drop int64
	}{{"read", 1 << 62, segmentDrop}, {"mapped", 1, segmentDrop}, {"mapped, pages given back at every batch", 1, 1}} {
		t.Run(m.name, func(t *testing.T) {
			defer func(min, drop int64) { minMapBody, segmentDrop = min, drop }(minMapBody, segmentDrop)
			minMapBody, segmentDrop = m.min, m.drop
			checkNextURLsMatchesNext(t)
		})
	}
}

func checkNextURLsMatchesNext(t *testing.T) {
	recs := genURLs(5000, 7)
	for _, cfg := range []WriterConfig{
		{FlushRows: 1}, {FlushRows: 100}, {FlushRows: 777, SegmentBytes: 64 << 10},
		{FlushRows: 700, Compression: "zstd"}, {FlushRows: 700, Compression: "lz4"},
	} {
		dir := t.TempDir()
		n := len(recs)
		if cfg.FlushRows == 1 {
			n = 300
		}
		segs := writeURLs(t, dir, recs[:n], cfg)
		total := 0
		for _, si := range segs {
			got := sameCols(t, filepath.Join(dir, si.File), fmt.Sprintf("%+v %s", cfg, si.File))
			for i, u := range got.URLs {
				if u != recs[total+i].URL || got.Dests[i] != recs[total+i].Dest {
					t.Fatalf("%+v: row %d differs", cfg, total+i)
				}
			}
			total += len(got.URLs)
			if !got.Info.Clean {
				t.Fatalf("%+v: %s not clean: %+v", cfg, si.File, got.Info)
			}
		}
		if total != n {
			t.Fatalf("%+v: %d rows, want %d", cfg, total, n)
		}
	}
	// Empty segment (schema and end-of-stream only).
	dir := t.TempDir()
	writeURLs(t, dir, nil, WriterConfig{})
	p, _ := ListSegments(dir, PrefixURLs)
	if got := sameCols(t, p[0], "empty"); len(got.URLs) != 0 || !got.Info.Clean {
		t.Fatalf("empty segment: %+v", got)
	}
	// Cuts anywhere, including 0 bytes.
	writeURLs(t, t.TempDir(), nil, WriterConfig{})
	dir = t.TempDir()
	writeURLs(t, dir, recs[:2000], WriterConfig{FlushRows: 100})
	p, _ = ListSegments(dir, PrefixURLs)
	full, _ := os.ReadFile(p[0])
	rng := rand.New(rand.NewPCG(5, 5))
	cut := filepath.Join(t.TempDir(), "cut.arrows")
	cuts := []int{0, 1, 8, len(full) - 8, len(full) - 1}
	for i := 0; i < 60; i++ {
		cuts = append(cuts, rng.IntN(len(full)))
	}
	for _, c := range cuts {
		os.WriteFile(cut, full[:c], 0o644)
		sameCols(t, cut, fmt.Sprintf("cut at %d", c))
	}
}

// BytesRead counts what the reader consumed of the file: on the read path
// exactly what the kernel counts as read (rchar), which is less than the
// file (only the buffers NextURLs decodes are read) but every URL byte;
// the mapped path counts the same bytes.
func TestBytesReadCounted(t *testing.T) {
	dir := t.TempDir()
	writeURLs(t, dir, genURLs(20000, 3), WriterConfig{FlushRows: 4000})
	p, _ := ListSegments(dir, PrefixURLs)
	st, _ := os.Stat(p[0])
	count := func(min int64) (counted, rchar int64) {
		defer func(old int64) { minMapBody = old }(minMapBody)
		minMapBody = min
		runtime.LockOSThread() // rchar of this thread only
		defer runtime.UnlockOSThread()
		before, own := threadRchar(t)
		s, err := OpenSegment(p[0], KindURLs)
		if err != nil {
			t.Fatal(err)
		}
		for s.NextURLs() {
		}
		after, _ := threadRchar(t)
		counted, rchar = s.BytesRead(), after-before-own
		s.Close()
		return counted, rchar
	}
	read, rchar := count(1 << 62)
	if rchar >= 0 && read != rchar && runtime.GOOS == "linux" {
		t.Errorf("read path: counted %d bytes, the kernel %d", read, rchar)
	}
	var urlBytes int64
	for _, u := range genURLs(20000, 3) {
		urlBytes += int64(len(u.URL))
	}
	if read >= st.Size() || read < urlBytes {
		t.Errorf("read path: counted %d bytes of a %d-byte file with %d bytes of URLs", read, st.Size(), urlBytes)
	}
	if runtime.GOOS == "linux" {
		if mapped, _ := count(1); mapped != read {
			t.Errorf("mapped path counted %d bytes, the read path %d", mapped, read)
		}
	}
}

// threadRchar is the calling thread's rchar before this call's own read of
// it, and that read's size (-1 where there is none).
func threadRchar(t *testing.T) (rchar, own int64) {
	b, err := os.ReadFile("/proc/thread-self/io")
	if err != nil {
		return -1, 0
	}
	rchar = -1
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "rchar: "); ok {
			rchar, _ = strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	return rchar, int64(len(b))
}

// A mapped batch of a segment truncated under the reader faults when read;
// with SetPanicOnFault (as condense runs) that is a recoverable panic, not a
// crash. And the strings of a mapped batch hold the right bytes.
func TestNextURLsMappedTruncated(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("batches are mapped on linux only")
	}
	defer func(old int64) { minMapBody = old }(minMapBody)
	minMapBody = 1
	dir := t.TempDir()
	recs := genURLs(20000, 9)
	writeURLs(t, dir, recs, WriterConfig{FlushRows: 20000})
	p, _ := ListSegments(dir, PrefixURLs)
	s, err := OpenSegment(p[0], KindURLs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.NextURLs() {
		t.Fatalf("no batch: %+v", s.Info())
	}
	if s.seg == nil {
		t.Fatal("batch body was not mapped")
	}
	c := s.URLColumns()
	if c.Len() != len(recs) || c.URL(123) != recs[123].URL {
		t.Fatalf("mapped batch: %d rows, row 123 %q", c.Len(), c.URL(123))
	}
	if err := os.Truncate(p[0], 0); err != nil {
		t.Fatal(err)
	}
	faulted := func() (f bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				_, f = r.(runtime.Error)
			}
		}()
		var sum int
		for i := 0; i < c.Len(); i++ {
			sum += len(c.URL(i)) + int(c.URL(i)[0])
		}
		return sum < 0
	}()
	if !faulted {
		t.Fatal("reading a truncated mapped batch did not fault")
	}
}

// Random corruption: NextURLs never panics, refuses with a marked error or
// reports a cut, and agrees with Next whenever both read the file as
// clean. (Metadata corruption the Arrow reader trips over in fields
// NextURLs does not use can make them stop at different batches.)
func TestNextURLsRandomCorruption(t *testing.T) {
	t.Parallel() // CPU only, on files of its own
	differ := 0
	corruptions(t, smallSegment(t), rand.New(rand.NewPCG(3, 4)), 2000, func(i int, path string) {
		slow, fast := readCols(t, path, false), readCols(t, path, true)
		if fast.Info.Rows != int64(len(fast.URLs)) || (!fast.Info.Clean && fast.Err == "" && fast.Info.Error == "") {
			t.Fatalf("mutation %d: inconsistent state %+v", i, fast.Info)
		}
		if slow.Info.Clean && fast.Info.Clean {
			if !reflect.DeepEqual(slow, fast) {
				t.Fatalf("mutation %d: both clean, rows differ", i)
			}
			return
		}
		slow.Info.Error, fast.Info.Error = "", ""
		if !reflect.DeepEqual(slow, fast) {
			differ++
		}
	})
	t.Logf("%d of 2000 mutations stop at a different batch", differ)
}

func FuzzNextURLs(f *testing.F) {
	good := smallSegment(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	path := filepath.Join(f.TempDir(), "f.arrows")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		readCols(t, path, true)
	})
}
