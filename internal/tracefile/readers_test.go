package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cespare/xxhash/v2"
)

// smallCondensed is a valid condensed trace of n fingerprints.
func smallCondensed(t testing.TB, n int) []byte {
	t.Helper()
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = uint64(i%97) * 0x9e3779b97f4a7c15
	}
	path := filepath.Join(t.TempDir(), "t.arrow")
	// A fixed creation time: a fuzz worker process makes the same file.
	m := Meta{CrawlID: "synthetic requests=600000 keys=5000", Nodes: 1, Partitioner: "synthetic", Subtrace: SubtraceFull, Created: time.Unix(1700000000, 0)}
	if err := WriteCondensed(path, m, fps); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// smallTable is a valid results table of a few rows.
func smallTable(t testing.TB) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "policy", Type: arrow.BinaryTypes.String},
		{Name: "hits", Type: arrow.PrimitiveTypes.Int64}, {Name: "rel", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"lru", "min", "clock"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{7, 9, 11}, nil)
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{1.5, 0, 2}, []bool{true, false, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	meta := TableMeta{Kind: KindReplayResults, Table: "results", CrawlID: "crawl-9", Inputs: []string{"node-000.full.arrow"},
		Params: map[string]string{"seeds": "1"}, Created: time.Unix(1700000000, 0)}
	if err := WriteTable(&buf, rec, meta, mem); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readCondensedFile reads every fingerprint of the file at path as replay
// does; it returns the first error.
func readCondensedFile(path string) error {
	r, err := OpenCondensed(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		for _, fp := range r.FPs() {
			_ = fp
		}
	}
	return r.Err()
}

// flips are the xor masks the flip tests apply to every byte (one in
// -short mode).
func flips() []byte {
	if testing.Short() {
		return []byte{88}
	}
	return []byte{88, 0xff, 1}
}

// marked fails t unless err is nil or marks a bad input file.
func marked(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBadInput) {
		t.Fatalf("%s: error not marked as bad input: %v", what, err)
	}
}

// Every byte of a condensed trace outside its fingerprints, xored with 88
// as in the report of a panicking inspect (b[len(b)-342] ^= 88), gives an
// error naming the file or a trace that reads: never a panic.
func TestCondensedFlipsNeverPanic(t *testing.T) {
	t.Parallel() // CPU only, on files of its own
	good := smallCondensed(t, 1000)
	dir := t.TempDir()
	path := filepath.Join(dir, "f.arrow")
	errs := 0
	for i := range good {
		if i >= 400 && i < len(good)-1200 {
			continue // the fingerprints: read as data (see the checksum test)
		}
		for _, x := range flips() {
			data := append([]byte(nil), good...)
			data[i] ^= x
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			err := readCondensedFile(path)
			marked(t, err, "read")
			var out bytes.Buffer
			ierr := Inspect(&out, path, 3)
			marked(t, ierr, "inspect")
			if err != nil {
				errs++
				if !bytes.Contains([]byte(err.Error()), []byte(path)) {
					t.Fatalf("flip at %d: error does not name the file: %v", i, err)
				}
			}
		}
	}
	if errs == 0 {
		t.Fatal("no flip was refused")
	}
}

// Every byte of a results table xored: an error or a table, never a panic.
func TestTableFlipsNeverPanic(t *testing.T) {
	t.Parallel() // CPU only, on files of its own
	good := smallTable(t)
	path := filepath.Join(t.TempDir(), "results.arrow")
	for i := range good {
		for _, x := range flips() {
			data := append([]byte(nil), good...)
			data[i] ^= x
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			marked(t, Inspect(io.Discard, path, 10), "inspect")
		}
	}
}

func FuzzCondensedReader(f *testing.F) {
	good := smallCondensed(f, 1000)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("ARROW1\x00\x00ARROW1"))
	path := filepath.Join(f.TempDir(), "f.arrow") // one file per fuzz worker process
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := readCondensedFile(path)
		marked(t, err, "read")
		marked(t, Inspect(io.Discard, path, 3), "inspect")
		if err == nil && !bytes.Equal(data, good) {
			t.Fatal("a changed condensed trace read without an error")
		}
	})
}

func FuzzTableReader(f *testing.F) {
	good := smallTable(f)
	f.Add(good)
	f.Add(good[:len(good)-20])
	path := filepath.Join(f.TempDir(), "results.arrow")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		marked(t, Inspect(io.Discard, path, 10), "inspect")
		_, err := VerifyChecksum(path)
		marked(t, err, "verify")
		if err == nil && !bytes.Equal(data, good) {
			t.Fatal("a changed results table verified")
		}
	})
}

// wholeSum is the checksum of the Arrow file b computed independently:
// the xxHash64 of its bytes with the footer's checksum value (the last
// "xxh64:" in the file) read as the placeholder.
func wholeSum(t *testing.T, b []byte) (sum, recorded string) {
	t.Helper()
	i := bytes.LastIndex(b, []byte(checksumPrefix))
	if i < 0 {
		t.Fatal("no checksum in the file")
	}
	c := bytes.Clone(b)
	copy(c[i:], checksumPending)
	return fmt.Sprintf("xxh64:%016x", xxhash.Sum64(c)), string(b[i : i+len(checksumPending)])
}

// A condensed trace records the xxHash64 of the whole file, computed here
// independently; a full read and VerifyChecksum check it, and a flipped
// byte of the data is an error naming the file for both.
func TestCondensedChecksum(t *testing.T) {
	fps := make([]uint64, CondensedBatchRows+1000) // two batches
	for i := range fps {
		fps[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	path := filepath.Join(t.TempDir(), "t.arrow")
	if err := WriteCondensed(path, Meta{CrawlID: "c", Nodes: 1, Subtrace: SubtraceFull}, fps); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 8*len(fps))
	for i, fp := range fps {
		binary.LittleEndian.PutUint64(raw[8*i:], fp)
	}
	good, _ := os.ReadFile(path)
	want, _ := wholeSum(t, good)
	r, err := OpenCondensed(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta().Checksum != want {
		t.Errorf("checksum %q, want %q", r.Meta().Checksum, want)
	}
	r.Close()
	if err := readCondensedFile(path); err != nil {
		t.Fatal(err)
	}
	if st, err := VerifyChecksum(path); st != ChecksumOK || err != nil {
		t.Fatalf("verify: %v %v", st, err)
	}
	start := bytes.Index(good, raw[:64])
	if start < 0 {
		t.Fatal("fingerprints not found in the file")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 60 {
		data := append([]byte(nil), good...)
		i := start + rng.IntN(len(raw))
		data[i] ^= byte(1 + rng.IntN(255))
		os.WriteFile(path, data, 0o644)
		for what, err := range map[string]error{"read": readCondensedFile(path), "verify": verifyErr(path)} {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "checksum mismatch") {
				t.Fatalf("flip at %d: %s: %v; want a checksum mismatch naming the file", i, what, err)
			}
		}
	}
}

func verifyErr(path string) error {
	_, err := VerifyChecksum(path)
	return err
}

// A results table's checksum covers its record batch body (and the rest of
// the file, TestTableEveryBitFlipRefused): every flipped
// byte there is a mismatch.
func TestTableChecksum(t *testing.T) {
	good := smallTable(t)
	path := filepath.Join(t.TempDir(), "results.arrow")
	os.WriteFile(path, good, 0o644)
	if st, err := VerifyChecksum(path); st != ChecksumOK || err != nil {
		t.Fatalf("verify: %v %v", st, err)
	}
	l, err := checkFile(bytes.NewReader(good), int64(len(good)))
	if err != nil || len(l.blocks) != 1 {
		t.Fatalf("layout: %v %+v", err, l)
	}
	b := l.blocks[0]
	for i := b.offset + b.meta; i < b.offset+b.meta+b.body; i++ {
		data := append([]byte(nil), good...)
		data[i] ^= 0x10
		os.WriteFile(path, data, 0o644)
		if _, err := VerifyChecksum(path); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
}

// oldCondensed writes a condensed trace of fps as crawltrace did before
// its checksum covered the whole file: checksum (the data's, "" for
// none) in both schemas.
func oldCondensed(t *testing.T, path string, fps []uint64, checksum string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewGoAllocator()
	schema := CondensedSchema(Meta{CrawlID: "old", Nodes: 1, Subtrace: SubtraceFull, Checksum: checksum})
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewUint64Builder(mem)
	b.AppendValues(fps, nil)
	col := b.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(fps)))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
}

// A file without a checksum is an error naming it: a flipped bit of the
// metadata vector's length can drop the key.
func TestNoChecksumIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.arrow")
	oldCondensed(t, path, []uint64{1, 2, 3}, "")
	if _, err := VerifyChecksum(path); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no checksum") || !strings.Contains(err.Error(), path) {
		t.Fatalf("verify: %v", err)
	}
	if err := readCondensedFile(path); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("read: %v", err)
	}
}

// A file written when the checksum covered the data only still reads,
// and verifies as ChecksumData; one flipped byte of its data is refused.
func TestDataChecksumStillReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.arrow")
	fps := []uint64{1, 2, 3}
	raw := make([]byte, 8*len(fps))
	for i, fp := range fps {
		binary.LittleEndian.PutUint64(raw[8*i:], fp)
	}
	oldCondensed(t, path, fps, fmt.Sprintf("xxh64:%016x", xxhash.Sum64(raw)))
	if st, err := VerifyChecksum(path); st != ChecksumData || err != nil {
		t.Fatalf("verify: %v %v", st, err)
	}
	if err := readCondensedFile(path); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Verify(&out, path); err != nil || !strings.Contains(out.String(), "checksum of its data OK") {
		t.Errorf("Verify: %v %q", err, out.String())
	}
	good, _ := os.ReadFile(path)
	i := bytes.Index(good, raw)
	data := bytes.Clone(good)
	data[i+9] ^= 1
	os.WriteFile(path, data, 0o644)
	if err := readCondensedFile(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped data: %v", err)
	}
}
