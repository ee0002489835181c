package recorder

import (
	"bytes"
	"io"
	"testing"

	"github.com/crawltrace/crawltrace/internal/counters"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// The checkpoint part loaders, by the first byte of the fuzz input: each
// builds the smallest node its part needs and loads the rest of the input
// into it. The segments part is left out: its loader cuts and moves the
// log files it names.
var fuzzParts = []struct {
	name string
	load func(t *testing.T, r io.Reader) error
}{
	{"due", func(t *testing.T, r io.Reader) error {
		return splitterPart(t, splitter.New(splitter.Options{DUE: due.NewMemory(0)}), "due").Load(r)
	}},
	{"due-disk", func(t *testing.T, r io.Reader) error {
		d, err := due.NewDisk(due.DiskConfig{Dir: t.TempDir(), BufferSize: 1 << 12})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		return d.Load(r)
	}},
	{"frontier", func(t *testing.T, r io.Reader) error {
		return newFrontier(OrderBFS, 1).Part(func(int) {}).Load(r)
	}},
	{"counters", func(t *testing.T, r io.Reader) error {
		return (countersPart{&node{split: splitter.New(splitter.Options{})}}).Load(r)
	}},
	{"pending", func(t *testing.T, r io.Reader) error {
		return (&pendingPart{}).Load(r)
	}},
}

// splitterPart is s's checkpoint part of that name.
func splitterPart(t testing.TB, s *splitter.Splitter, name string) checkpoint.Part {
	for _, p := range s.Parts() {
		if p.Name() == name {
			return p
		}
	}
	t.Fatalf("the splitter offers no %s part", name)
	return nil
}

// savedParts are valid saved parts, by the index of their loader: the
// fuzz seeds, and the bases of the damaged seeds.
func savedParts(t testing.TB) map[byte][]byte {
	out := map[byte][]byte{}
	d := due.NewMemory(0)
	for i := range uint64(300) {
		d.Add(i*0x9e3779b97f4a7c15 + 1)
	}
	var b bytes.Buffer
	if err := d.Save(&b); err != nil {
		t.Fatal(err)
	}
	out[0], out[1] = bytes.Clone(b.Bytes()), bytes.Clone(b.Bytes())
	f := newFrontier(OrderBFS, 1)
	for _, u := range []string{"http://h0021.test/private/18.html", "http://h0021.test/a", "http://b.test/x?y=1", "http://c.test/"} {
		f.Add(u)
	}
	b.Reset()
	if err := f.Part(nil).Save(&b); err != nil {
		t.Fatal(err)
	}
	out[2] = bytes.Clone(b.Bytes())
	c := &node{split: splitter.New(splitter.Options{})}
	lens := map[string]int64{}
	for _, name := range counters.Names[worker.Counters[int64]]() {
		lens[name] = int64(len(name))
	}
	c.st.Restore(worker.Snapshot{Counters: counters.Get[worker.Counters[int64]](lens)})
	b.Reset()
	if err := (countersPart{c}).Save(&b); err != nil {
		t.Fatal(err)
	}
	out[3] = bytes.Clone(b.Bytes())
	b.Reset()
	p := &pendingPart{batches: []*peer.Batch{{From: 1, Epoch: 2, Seq: 3, URLs: []string{"http://a.test/"}, Kinds: []string{"link"}, Source: []uint64{9}}}}
	if err := p.Save(&b); err != nil {
		t.Fatal(err)
	}
	out[4] = bytes.Clone(b.Bytes())
	return out
}

// The fuzz seeds' valid parts load without error.
func TestSavedPartsLoad(t *testing.T) {
	for i, b := range savedParts(t) {
		if err := fuzzParts[i].load(t, bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", fuzzParts[i].name, err)
		}
	}
}

// FuzzCheckpointParts loads damaged checkpoint parts: each loader returns
// an error or loads something, and never panics.
func FuzzCheckpointParts(f *testing.F) {
	saved := savedParts(f)
	for i := range byte(len(fuzzParts)) {
		b := saved[i]
		f.Add(append([]byte{i}, b...))
		// The report's damage: a zeroed part, a byte flipped in the
		// middle, a part cut in half.
		f.Add(append([]byte{i}, make([]byte, len(b))...))
		flipped := bytes.Clone(b)
		flipped[len(b)/2] ^= 0x5a
		f.Add(append([]byte{i}, flipped...))
		f.Add(append([]byte{i}, b[:len(b)/2]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p := fuzzParts[int(data[0])%len(fuzzParts)]
		_ = p.load(t, bytes.NewReader(data[1:]))
	})
}
