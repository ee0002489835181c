package tracefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestTableMetaRoundTrip(t *testing.T) {
	m := TableMeta{Kind: KindReplayResults, Table: "results", CrawlID: "c1,c2", Inputs: []string{"a.arrow", "b, c.arrow"},
		Params: map[string]string{"sizes": "1..8", "policies": "lru,min"}, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	got, err := ParseTableMeta(m.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != m.Kind || got.Table != m.Table || got.CrawlID != m.CrawlID || !got.Created.Equal(m.Created) ||
		len(got.Inputs) != 2 || got.Inputs[1] != "b, c.arrow" || got.Params["sizes"] != "1..8" || got.ToolVersion != ToolVersion {
		t.Errorf("round trip: %+v", got)
	}
	if _, err := ParseTableMeta(arrow.NewMetadata([]string{"x"}, []string{"y"})); !errors.Is(err, ErrCorrupt) {
		t.Errorf("no marker: %v", err)
	}
	md := m.Metadata()
	keys, vals := md.Keys(), md.Values()
	for i, k := range keys {
		if k == metaPrefix+"params" {
			vals[i] = "{not json"
		}
	}
	if _, err := ParseTableMeta(arrow.NewMetadata(keys, vals)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad params: %v", err)
	}
}

// A results table written through WriteTable opens in Inspect, alone and in
// a directory beside a condensed trace.
func TestInspectTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "policy", Type: arrow.BinaryTypes.String}, {Name: "hits", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"lru", "min"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{7, 9}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.arrow")
	meta := TableMeta{Kind: KindReplayResults, Table: "results", CrawlID: "crawl-9", Inputs: []string{"node-000.full.arrow"},
		Params: map[string]string{"seeds": "1"}}
	if err := WriteFileAtomic(path, func(w io.Writer) error { return WriteTable(w, rec, meta, mem) }); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Inspect(&out, path, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replay results \"results\"", `crawl "crawl-9"`, "inputs: node-000.full.arrow", "params: seeds=1", "hits: type=int64", "lru 7", "min 9", "2 rows"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect lacks %q:\n%s", want, out.String())
		}
	}
	// Beside a condensed trace in one directory.
	w, err := CreateCondensed(filepath.Join(dir, CondensedName(0, SubtraceFull)), Meta{CrawlID: "crawl-9", Nodes: 1, Subtrace: SubtraceFull})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(42)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Inspect(&out, dir, 1); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "condensed trace") || !strings.Contains(s, "replay results") || strings.Contains(s, "error") {
		t.Errorf("directory inspect:\n%s", s)
	}
	// An Arrow file without the marker is refused with one line naming it.
	os.WriteFile(filepath.Join(dir, "junk.arrow"), []byte("nope"), 0o644)
	if err := Inspect(&out, filepath.Join(dir, "junk.arrow"), 1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "junk.arrow") {
		t.Errorf("junk: %v", err)
	}
}
