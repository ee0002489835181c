package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// bytesPart is a part holding some bytes; Load keeps what it read.
type bytesPart struct {
	name   string
	data   []byte
	loaded []byte
	err    error // returned by Save
}

func (p *bytesPart) Name() string { return p.name }

func (p *bytesPart) Save(w io.Writer) error {
	if p.err != nil {
		return p.err
	}
	_, err := w.Write(p.data)
	return err
}

func (p *bytesPart) Load(r io.Reader) error {
	b, err := io.ReadAll(r)
	p.loaded = b
	return err
}

// nodeParts is a node's parts at a generation: their bytes differ by node
// and generation, and the second part is larger than Write's buffer.
func nodeParts(node int, gen uint64) []*bytesPart {
	big := bytes.Repeat([]byte(fmt.Sprintf("node %d gen %d;", node, gen)), 1<<17)
	return []*bytesPart{
		{name: "small", data: []byte(fmt.Sprintf("n%d g%d", node, gen))},
		{name: "big", data: big},
		{name: "empty"},
	}
}

func asParts(ps []*bytesPart) []Part {
	out := make([]Part, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// take writes and commits generation gen for every node of nodes.
func take(t *testing.T, dir, crawl string, gen uint64, nodes ...int) {
	t.Helper()
	for _, id := range nodes {
		if _, err := Write(dir, Meta{CrawlID: crawl, Node: id, Generation: gen, Time: time.Now().UTC()}, asParts(nodeParts(id, gen))); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range nodes {
		if err := Commit(dir, id); err != nil {
			t.Fatal(err)
		}
	}
}

// Write records every part with its size and xxhash64 and checkpoint.json
// with the checksum the format describes; Commit puts it in place and
// keeps the previous one until RemoveOld; Find and Load give the parts
// back.
func TestWriteCommitFindLoad(t *testing.T) {
	dir := t.TempDir()
	take(t, dir, "c", 1, 0, 1)
	take(t, dir, "c", 2, 0, 1)
	state := StateDir(dir, 1)
	if want := filepath.Join(dir, "node-001", "state"); state != want {
		t.Fatalf("StateDir %s, want %s", state, want)
	}
	if _, err := os.Stat(filepath.Join(state, OldName, MetaName)); err != nil {
		t.Errorf("the previous checkpoint is not kept before RemoveOld: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, TmpName)); err == nil {
		t.Errorf("%s left after the commit", TmpName)
	}

	// checkpoint.json read independently: every part's size and
	// xxhash64, and the checksum over the file with its digits zeroed.
	path := filepath.Join(state, DirName, MetaName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Format     string `json:"format"`
		Version    int    `json:"version"`
		CrawlID    string `json:"crawl_id"`
		Node       int    `json:"node"`
		Generation uint64 `json:"generation"`
		Parts      []struct {
			Name  string `json:"name"`
			Bytes int64  `json:"bytes"`
			XXH64 string `json:"xxhash64"`
		} `json:"parts"`
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Format != "crawltrace-checkpoint" || m.Version != 2 || m.CrawlID != "c" || m.Node != 1 || m.Generation != 2 {
		t.Errorf("checkpoint.json: %+v", m)
	}
	want := nodeParts(1, 2)
	if len(m.Parts) != len(want) {
		t.Fatalf("%d parts, want %d", len(m.Parts), len(want))
	}
	for i, p := range want {
		r := m.Parts[i]
		if r.Name != p.name || r.Bytes != int64(len(p.data)) || r.XXH64 != fmt.Sprintf("%016x", xxhash.Sum64(p.data)) {
			t.Errorf("part %d recorded as %+v; want %s, %d bytes, xxhash64 %016x", i, r, p.name, len(p.data), xxhash.Sum64(p.data))
		}
		got, err := os.ReadFile(filepath.Join(state, DirName, p.name))
		if err != nil || !bytes.Equal(got, p.data) {
			t.Errorf("part %s on disk: %d bytes, %v", p.name, len(got), err)
		}
	}
	sum := regexp.MustCompile(`"checksum": "([0-9a-f]{16})"\n}\n$`).FindSubmatch(b)
	if sum == nil {
		t.Fatalf("no checksum at the end of %s:\n%s", path, b)
	}
	zeroed := bytes.Replace(b, sum[1], []byte("0000000000000000"), 1)
	if got := fmt.Sprintf("%016x", xxhash.Sum64(zeroed)); got != string(sum[1]) {
		t.Errorf("checksum %s recorded, %s computed", sum[1], got)
	}

	set, err := Find(dir, "c", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if set.Gen != 2 || set.Dirs[1] != filepath.Join(state, DirName) || set.Meta[0].Generation != 2 {
		t.Fatalf("Find: %+v", set)
	}
	for _, id := range []int{0, 1} {
		ps := nodeParts(id, 2)
		for _, p := range ps {
			p.data = nil
		}
		if err := Load(set.Dirs[id], set.Meta[id], asParts(ps)); err != nil {
			t.Fatal(err)
		}
		for i, p := range nodeParts(id, 2) {
			if !bytes.Equal(ps[i].loaded, p.data) {
				t.Errorf("node %d: part %s loaded %d bytes, want %d", id, p.name, len(ps[i].loaded), len(p.data))
			}
		}
	}

	for _, id := range []int{0, 1} {
		if err := RemoveOld(dir, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(state, OldName)); err == nil {
		t.Error("RemoveOld left checkpoint.old")
	}
}

// A process killed between two nodes' commits leaves nodes one
// generation apart: Find takes the newest generation all nodes have,
// from checkpoint.old/ where it must.
func TestFindNewestSharedGeneration(t *testing.T) {
	dir := t.TempDir()
	take(t, dir, "c", 1, 0, 1, 2)
	take(t, dir, "c", 2, 0, 1, 2)
	take(t, dir, "c", 3, 0) // killed after node 0 switched
	set, err := Find(dir, "c", []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if set.Gen != 2 || set.Dirs[0] != filepath.Join(StateDir(dir, 0), OldName) || set.Dirs[2] != filepath.Join(StateDir(dir, 2), DirName) {
		t.Errorf("Find: %+v; want generation 2, node 0's from %s", set, OldName)
	}
}

// No checkpoint at all, or a first checkpoint committed by some nodes
// and only written by the others, is no checkpoint: the crawl starts
// again.
func TestFindNoCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if set, err := Find(dir, "c", []int{0, 1}); set != nil || err != nil {
		t.Errorf("empty directory: %+v, %v", set, err)
	}
	for _, id := range []int{0, 1} {
		if _, err := Write(dir, Meta{CrawlID: "c", Node: id, Generation: 1}, asParts(nodeParts(id, 1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := Commit(dir, 0); err != nil {
		t.Fatal(err)
	}
	if set, err := Find(dir, "c", []int{0, 1}); set != nil || err != nil {
		t.Errorf("first commit cut: %+v, %v", set, err)
	}
}

// A checkpoint that does not prove itself is refused with one line
// naming the file, matching tracefile.ErrCorrupt.
func TestFindRefusesDamage(t *testing.T) {
	flip := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b[len(b)/2] ^= 0x08
		return os.WriteFile(path, b, 0o644)
	}
	for _, tc := range []struct {
		name   string
		crawl  string // the crawl Find is asked for
		file   string // the file the error names, under node 1's state
		damage func(state string) error
	}{
		{"part byte flipped", "c", "checkpoint/big", func(s string) error { return flip(filepath.Join(s, DirName, "big")) }},
		{"part cut short", "c", "checkpoint/small", func(s string) error { return os.Truncate(filepath.Join(s, DirName, "small"), 2) }},
		{"part removed", "c", "checkpoint/empty", func(s string) error { return os.Remove(filepath.Join(s, DirName, "empty")) }},
		{"checkpoint.json byte flipped", "c", "checkpoint/checkpoint.json", func(s string) error { return flip(filepath.Join(s, DirName, MetaName)) }},
		{"checkpoint.json removed", "c", "checkpoint/checkpoint.json", func(s string) error { return os.Remove(filepath.Join(s, DirName, MetaName)) }},
		{"checkpoint.json edited", "c", "checkpoint/checkpoint.json", func(s string) error {
			path := filepath.Join(s, DirName, MetaName)
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(path, bytes.Replace(b, []byte(`"generation": 2`), []byte(`"generation": 3`), 1), 0o644)
		}},
		{"another crawl", "other", "checkpoint/checkpoint.json", func(string) error { return nil }},
		{"node without checkpoint", "c", "", func(s string) error { return os.RemoveAll(s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			take(t, dir, "c", 1, 0, 1)
			take(t, dir, "c", 2, 0, 1)
			for _, id := range []int{0, 1} {
				if err := RemoveOld(dir, id); err != nil {
					t.Fatal(err)
				}
			}
			state := StateDir(dir, 1)
			if err := tc.damage(state); err != nil {
				t.Fatal(err)
			}
			set, err := Find(dir, tc.crawl, []int{0, 1})
			want := filepath.Join(state, tc.file)
			if tc.name == "another crawl" {
				want = filepath.Join(StateDir(dir, 0), tc.file) // node 0 is read first
			}
			if set != nil || !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Find: %+v, %v; want a one-line corrupt-file error naming %s", set, err, want)
			}
		})
	}
}

// Load leaves a part the checkpoint does not list as it is, and a part
// that cannot read its bytes is an error naming its file.
func TestLoadParts(t *testing.T) {
	dir := t.TempDir()
	take(t, dir, "c", 1, 0)
	set, err := Find(dir, "c", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	extra := &bytesPart{name: "new", loaded: []byte("kept")}
	if err := Load(set.Dirs[0], set.Meta[0], []Part{extra}); err != nil || string(extra.loaded) != "kept" {
		t.Errorf("unlisted part: %q, %v", extra.loaded, err)
	}
	bad := failLoad{"small"}
	err = Load(set.Dirs[0], set.Meta[0], []Part{bad})
	if want := filepath.Join(set.Dirs[0], "small"); !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("failed load: %v; want an error naming %s", err, want)
	}
}

type failLoad struct{ name string }

func (p failLoad) Name() string           { return p.name }
func (p failLoad) Save(w io.Writer) error { return nil }
func (p failLoad) Load(r io.Reader) error { return errors.New("unreadable") }

// A part that fails to save fails the checkpoint, naming node and part,
// and leaves the current checkpoint alone.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	take(t, dir, "c", 1, 3)
	ps := nodeParts(3, 2)
	ps[1].err = errors.New("disk full")
	_, err := Write(dir, Meta{CrawlID: "c", Node: 3, Generation: 2}, asParts(ps))
	if err == nil || !strings.Contains(err.Error(), "node 3: big: disk full") {
		t.Fatalf("Write: %v", err)
	}
	set, err := Find(dir, "c", []int{3})
	if err != nil || set.Gen != 1 {
		t.Errorf("after a failed write: %+v, %v; want generation 1", set, err)
	}
}

// The checkpoint.json quoted in docs/crash-safety.md, written by an
// earlier build, still proves itself: its checksum pins the format (the
// field order, the indentation, xxhash64 over the zeroed checksum), so a
// change that would make existing checkpoints unreadable fails here.
func TestCheckpointMetaPinned(t *testing.T) {
	doc, err := os.ReadFile("../../docs/crash-safety.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(\\{\n  \"format\": \"crawltrace-checkpoint\".*?\n\\}\n)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/crash-safety.md quotes no checkpoint.json")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MetaName), m[1], 0o644)
	meta, err := readMeta(dir, 0)
	if err != nil {
		t.Fatalf("the documented checkpoint.json: %v", err)
	}
	if len(meta.Parts) != 5 || meta.Parts[1].Name != "due" || meta.Parts[1].XXH64 != "2898a1e5af9d752a" || meta.Stop != "done" {
		t.Errorf("the documented checkpoint.json read as %+v", meta)
	}
	// Written again, it is the same bytes.
	if got := encodeMeta(meta); !bytes.Equal(got, m[1]) {
		t.Errorf("encoded again:\n%s\nwant\n%s", got, m[1])
	}
}
