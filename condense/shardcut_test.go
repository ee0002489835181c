package condense

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// damagedCrawl writes a two-node crawl: node 0 one segment of cutBatches
// batches of cutRows rows each (most of the input, so that map tasks'
// ranges start inside it) and then small segments (whose URLs repeat the
// first's: a map task reads them after its part of the first), node 1
// small segments, with compression ("", "zstd"). It returns the path of
// node 0's first segment and where each of its batches starts.
func damagedCrawl(t *testing.T, dir string, manifest bool, compression string) (string, []int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(23, 5))
	m := tracefile.Meta{CrawlID: "cut", Nodes: 2, Partitioner: "host", Created: time.Unix(1, 0)}
	man := tracefile.NewManifest(m)
	var seg string
	var starts []int64
	segInfos := map[int][]tracefile.SegmentInfo{}
	for part, c := range []struct {
		node     int
		rows     int
		segBytes int64
	}{{0, cutBatches * cutRows, 1 << 30}, {0, laterRows, 24 << 10}, {1, 3000, 24 << 10}} {
		n := c.node
		m.Node = n
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(dir, n), m, tracefile.WriterConfig{FlushRows: cutRows, FlushInterval: time.Hour, SegmentBytes: c.segBytes, Compression: compression})
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.rows {
			k := rng.IntN(2500)
			if _, err := w.Append(tracefile.URLRecord{URL: fmt.Sprintf("http://h%d.test/p/%d", k%41, k), Kind: tracefile.URLLink, Dest: uint16(k % 2), Source: uint64(i)}); err != nil {
				t.Fatal(err)
			}
			if part == 0 && (i+1)%cutRows == 0 {
				// A batch was just written: the next starts where it ends.
				ss := w.Segments()
				starts = append(starts, ss[len(ss)-1].Bytes)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		segInfos[n] = append(segInfos[n], w.Segments()...)
	}
	for n := range 2 {
		man.AddNode(n, segInfos[n], nil)
	}
	if manifest {
		if err := tracefile.WriteManifest(dir, man); err != nil {
			t.Fatal(err)
		}
	}
	segs, _ := tracefile.ListSegments(tracefile.NodeDir(dir, 0), tracefile.PrefixURLs)
	if len(segs) < 3 || !strings.HasSuffix(segs[0], tracefile.SegmentName(tracefile.PrefixURLs, 1)) {
		t.Fatalf("node 0: segments %v", segs)
	}
	seg = segs[0]
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// Batch 0 starts after the schema message (a body-less message).
	starts = append([]int64{8 + int64(int32(binary.LittleEndian.Uint32(b[4:])))}, starts[:cutBatches-1]...)
	for i, s := range starts {
		if binary.LittleEndian.Uint32(b[s:]) != 0xffffffff {
			t.Fatalf("batch %d does not start at %d", i, s)
		}
	}
	return seg, starts
}

// The damaged segment's batches and rows a batch, and the rows of node 0's
// later segments.
const cutBatches, cutRows, laterRows = 24, 250, 1500

func hdr(t *testing.T, f *os.File, off int64) []byte {
	t.Helper()
	var b [8]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	return b[:]
}

// damageBatch damages batch k of seg, which starts at off: its framing
// (the continuation marker), or its body (the url column's offsets become
// negative, with the framing intact, so that the batch fails to decode),
// or, zbody, the compressed data of a zstd segment's first buffer (after
// its uncompressed length, which the framing check bounds).
func damageBatch(t *testing.T, seg string, off int64, kind string) {
	t.Helper()
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch kind {
	case "framing":
		_, err = f.WriteAt([]byte{0, 0, 0, 0}, off)
	case "body":
		var hdr [8]byte
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			t.Fatal(err)
		}
		body := off + 8 + int64(int32(binary.LittleEndian.Uint32(hdr[4:])))
		// The body's buffers: seq and time (8 bytes a row each, validity
		// buffers empty), then url's validity, offsets, data. Filling past
		// url's offsets with 0xff makes them negative.
		n := 16*cutRows + 64 + 4*(cutRows+1)
		junk := make([]byte, n)
		for i := range junk {
			junk[i] = 0xff
		}
		_, err = f.WriteAt(junk, body)
	case "zbody":
		_, err = f.WriteAt([]byte("not a zstd frame, not at all"), off+8+int64(int32(binary.LittleEndian.Uint32(hdr(t, f, off)[4:])))+8)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A sharded run counts what an unsharded run counts on a damaged input:
// a batch damaged in its framing or its body, first, in the middle or
// last in a segment that map tasks' ranges start inside of, before, at
// and after the damage. The merged report (its rows, distinct counts, cut
// segment) and traces equal the unsharded run's, which itself holds
// exactly the rows before the damaged batch of that segment.
func TestShardedEqualsUnshardedOnDamage(t *testing.T) {
	setForTest(t, &minPartitionBytes, 4<<10)
	type damage struct {
		kind     string
		batch    int
		manifest bool
		also     int // another batch damaged the same way, after batch (0: none)
	}
	cases := []damage{
		{"body", 0, false, 0}, {"body", 4, false, 0}, {"body", 4, true, 0}, {"body", 13, false, 0}, {"body", cutBatches - 1, false, 0},
		{"framing", 0, false, 0}, {"framing", 4, false, 0}, {"framing", 13, true, 0}, {"framing", cutBatches - 1, false, 0},
		{"zbody", 4, false, 0}, {"zbody", 13, true, 0},
		// A second corrupt batch, in a part read after the first: not
		// reached unsharded, so not reported.
		{"body", 4, false, 19}, {"zbody", 4, true, 19},
	}
	for _, d := range cases {
		t.Run(fmt.Sprintf("%s-batch%d-manifest%v-also%d", d.kind, d.batch, d.manifest, d.also), func(t *testing.T) {
			// Beside each other only: the parent, which set
			// minPartitionBytes, is not a parallel test.
			t.Parallel()
			in := t.TempDir()
			compression := ""
			if d.kind == "zbody" {
				compression = "zstd"
			}
			seg, starts := damagedCrawl(t, in, d.manifest, compression)
			damageBatch(t, seg, starts[d.batch], d.kind)
			if d.also > 0 {
				damageBatch(t, seg, starts[d.also], d.kind)
			}
			whole := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 17})
			// The reference: node 0 holds the rows of the batches before
			// the damaged one and those of its later segments, and its
			// first segment is reported cut, once.
			if got, want := whole.PerNode[0].Rows, int64(d.batch*cutRows+laterRows); got != want {
				t.Fatalf("unsharded: node 0 has %d rows, want %d (the batches before the damage and the later segments)", got, want)
			}
			if len(whole.CutSegments) != 1 || whole.CutSegments[0].File != seg || whole.CutSegments[0].RowsRecovered != int64(d.batch*cutRows) {
				t.Fatalf("unsharded: cut segments %+v", whole.CutSegments)
			}
			if d.kind == "body" && !strings.Contains(whole.CutSegments[0].Reason, fmt.Sprintf("corrupt batch %d:", d.batch)) {
				t.Errorf("unsharded: reason %q", whole.CutSegments[0].Reason)
			}
			for _, shards := range []int{2, 3, 5} {
				// One worker: a task reads its head part, then the rest
				// (node 0's later segments among them) in order.
				workers := 1
				if shards == 5 {
					workers = 2
				}
				merged, _, _ := runSharded(t, in, shards, workers)
				if !reflect.DeepEqual(comparable(whole), comparable(merged)) {
					t.Errorf("%d map tasks: merged report differs:\nwhole  %+v\n       %+v\nmerged %+v\n       %+v", shards, whole.PerNode, whole.CutSegments, merged.PerNode, merged.CutSegments)
				}
				sameTraces(t, whole, merged)
			}
		})
	}
}

// The damage lies where map tasks' ranges start inside the damaged
// segment after it, so the test above covers the case that needs the
// merge to drop what those tasks read.
func TestDamageFixtureSplitsSegment(t *testing.T) {
	in := t.TempDir()
	seg, starts := damagedCrawl(t, in, false, "")
	nodes, _ := tracefile.CrawlNodes(in)
	segs, err := crawlSegments(in, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if segs[0].path != seg {
		t.Fatal("node 0's segment is not first")
	}
	var total int64
	for _, s := range segs {
		total += s.size
	}
	for _, shards := range []int{2, 3, 5} {
		var inside []int64
		for i := 1; i < shards; i++ {
			if p := splitPoint(total, i, shards); p < segs[0].size {
				inside = append(inside, p)
			}
		}
		if len(inside) == 0 || inside[0] < starts[4] || (shards == 5 && inside[0] > starts[13]) {
			t.Errorf("%d tasks: ranges start at %v inside the segment, batches 4 and 13 at %d and %d", shards, inside, starts[4], starts[13])
		}
	}
}

// With --strict, a sharded run fails as the unsharded one does: the first
// map task that fails (in task order) fails with the unsharded error.
func TestShardedStrictOnDamage(t *testing.T) {
	for _, d := range []struct {
		kind  string
		batch int
	}{{"body", 4}, {"body", 13}, {"framing", 13}} {
		kind := fmt.Sprintf("%s in batch %d", d.kind, d.batch)
		in := t.TempDir()
		seg, starts := damagedCrawl(t, in, true, "")
		damageBatch(t, seg, starts[d.batch], d.kind)
		_, werr := Run(context.Background(), Config{Input: in, Output: t.TempDir(), Bits: 17, Strict: true})
		if !errors.Is(werr, tracefile.ErrCorrupt) {
			t.Fatalf("%s: unsharded strict: %v", kind, werr)
		}
		for _, shards := range []int{2, 3, 5} {
			out := t.TempDir()
			var first error
			for i := range shards {
				_, err := Run(context.Background(), Config{Input: in, Output: out, Bits: 17, Shard: i, Shards: shards, Strict: true})
				if err != nil && first == nil {
					first = err
				}
			}
			if first == nil || first.Error() != werr.Error() {
				t.Errorf("%s, %d map tasks: first failure %v, want %v", kind, shards, first, werr)
			}
		}
	}
}

// A segment whose schema is damaged (the very start of the file) is an
// error, sharded as unsharded: every map task that reads part of it fails
// as the unsharded run does.
func TestShardedSchemaDamage(t *testing.T) {
	in := t.TempDir()
	seg, _ := damagedCrawl(t, in, false, "")
	damageBatch(t, seg, 0, "framing")
	_, werr := Run(context.Background(), Config{Input: in, Output: t.TempDir(), Bits: 17})
	if !errors.Is(werr, tracefile.ErrCorrupt) {
		t.Fatalf("unsharded: %v", werr)
	}
	for _, shards := range []int{2, 3, 5} {
		out := t.TempDir()
		for i := range shards {
			_, err := Run(context.Background(), Config{Input: in, Output: out, Bits: 17, Shard: i, Shards: shards})
			if i == 0 && (err == nil || err.Error() != werr.Error()) {
				t.Errorf("%d map tasks: task 0: %v, want %v", shards, err, werr)
			}
		}
	}
}

// The head part of a map task is kept when no earlier task cut its
// segment, and dropped after a cut, which another segment's cut does not
// cause.
func TestDroppedHeads(t *testing.T) {
	cut := func(node int, file string) CutSegment {
		return CutSegment{Node: node, File: filepath.Join("crawl", fmt.Sprintf("node-%03d", node), file)}
	}
	maps := []*Report{
		{Shard: 0, PerNode: []NodeReport{{Node: 0, CutSegments: []CutSegment{cut(0, "a")}}}},
		{Shard: 1, Head: &HeadPart{Node: 0, Segment: "a", Rows: 5, Cut: true}, PerNode: []NodeReport{{Node: 0, CutSegments: []CutSegment{cut(0, "a"), cut(0, "b")}}}},
		{Shard: 2, Head: &HeadPart{Node: 0, Segment: "b", Rows: 5}, PerNode: []NodeReport{{Node: 0}}},
		{Shard: 3, Head: &HeadPart{Node: 1, Segment: "b", Rows: 5}, PerNode: []NodeReport{{Node: 1}}},
		{Shard: 4, Head: &HeadPart{Node: 1, Segment: "c", Rows: 5}, PerNode: []NodeReport{{Node: 1}}},
	}
	got := droppedHeads(maps)
	if want := []bool{false, true, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("dropped %v, want %v", got, want)
	}
}
