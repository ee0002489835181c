package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/fliptest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func isCorrupt(err error) bool { return errors.Is(err, tracefile.ErrCorrupt) }

// smallCheckpoint commits a checkpoint of node 0 whose parts are a few
// bytes each, and returns its directory.
func smallCheckpoint(t testing.TB, dir string) string {
	t.Helper()
	parts := []*bytesPart{{name: "segments", data: []byte(`{"urls":"urls-000001.arrows","bytes":1234}`)},
		{name: "frontier", data: []byte("http://a.test/\nhttp://b.test/x\n")}, {name: "empty"}}
	if _, err := Write(dir, Meta{CrawlID: "c", Node: 0, Generation: 3, Time: time.Unix(1700000000, 0).UTC()}, asParts(parts)); err != nil {
		t.Fatal(err)
	}
	if err := Commit(dir, 0); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(StateDir(dir, 0), DirName)
}

// Every single-bit flip of a checkpoint file, checkpoint.json or a part,
// is refused by Find, which a resume calls before it loads anything.
func TestCheckpointEveryBitFlipRefused(t *testing.T) {
	dir := t.TempDir()
	cp := smallCheckpoint(t, dir)
	for _, name := range []string{MetaName, "segments", "frontier"} {
		path := filepath.Join(cp, name)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fliptest.EveryBit(t, path, good, fliptest.Stride(len(good)), isCorrupt, func() error {
			_, err := Find(dir, "c", []int{0})
			return err
		})
	}
}

// FuzzCheckpointMeta: any checkpoint.json is a checkpoint that proves
// itself or an error marked ErrCorrupt, never a panic; a change to the
// one a writer wrote is never accepted.
func FuzzCheckpointMeta(f *testing.F) {
	dir := f.TempDir()
	cp := smallCheckpoint(f, dir)
	path := filepath.Join(cp, MetaName)
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	fuzzFind(f, dir, path, good)
}

// fuzzFind fuzzes the file at path of the checkpoint in dir, whose
// writer wrote good: Find must refuse anything else with an error marked
// ErrCorrupt.
func fuzzFind(f *testing.F, dir, path string, good []byte) {
	fliptest.Fuzz(f, path, good, isCorrupt, func(t *testing.T, data []byte) error {
		_, err := Find(dir, "c", []int{0})
		if err == nil && string(data) != string(good) {
			t.Fatalf("a changed %s was accepted: %q", filepath.Base(path), data)
		}
		return err
	})
}

// FuzzCheckpointPart: a checkpoint whose part holds anything but what
// its writer wrote is refused by Find (its size and xxhash64), before a
// loader sees it. The loaders themselves are fuzzed by the recorder's
// FuzzCheckpointParts.
func FuzzCheckpointPart(f *testing.F) {
	dir := f.TempDir()
	cp := smallCheckpoint(f, dir)
	path := filepath.Join(cp, "frontier")
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[1:])
	fuzzFind(f, dir, path, good)
}
