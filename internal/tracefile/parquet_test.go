package tracefile

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// readParquet reads a whole Parquet file back with arrow-go's reader: its
// table, key-value metadata, row-group count and the codecs of its column
// chunks.
func readParquet(t *testing.T, path string) (arrow.Table, map[string]string, int, map[compress.Compression]bool) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	kv := map[string]string{}
	for _, e := range rdr.MetaData().KeyValueMetadata() {
		if e.Value != nil {
			kv[e.Key] = *e.Value
		}
	}
	codecs := map[compress.Compression]bool{}
	for i := 0; i < rdr.NumRowGroups(); i++ {
		rg := rdr.MetaData().RowGroup(i)
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			codecs[cc.Compression()] = true
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 12}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl, kv, rdr.NumRowGroups(), codecs
}

// column returns column name of tbl as one array.
func column(t *testing.T, tbl arrow.Table, name string) arrow.Array {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %q in %s", name, tbl.Schema())
	}
	a, err := array.Concatenate(tbl.Column(idx[0]).Data().Chunks(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	return a
}

// Every kind exports with the rows written, the metadata carried over,
// zstd on every column chunk, and row groups of at most RowGroupRows.
func TestExportParquetKinds(t *testing.T) {
	crawl := t.TempDir()
	recs := genURLs(10000, 3)
	writeURLs(t, NodeDir(crawl, 0), recs, WriterConfig{FlushRows: 700, SegmentBytes: 64 << 10})
	pw, err := CreatePageWriter(NodeDir(crawl, 0), testMeta(0), WriterConfig{FlushRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	pages := []PageRecord{
		{ID: 1, Time: 5, URL: "http://a.test/", Status: 200, ContentType: "text/html", Bytes: 1234, Links: 60, UniqueLinks: 42, Quality: 0.5},
		{ID: 2, Time: 6, URL: "http://a.test/x", Status: 301, Redirect: "http://a.test/y", Quality: math.NaN()},
		{ID: 3, Time: 7, URL: "http://b.test/", Error: "dial tcp: refused", Quality: math.NaN()},
	}
	for _, p := range pages {
		if err := pw.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pq")
	cfg := ParquetConfig{RowGroupRows: 3000}
	files, err := ExportParquet(crawl, out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Kind != ParquetURLs || files[1].Kind != ParquetPages || files[0].Rows != int64(len(recs)) || files[1].Rows != 3 {
		t.Fatalf("files %+v", files)
	}
	tbl, kv, groups, codecs := readParquet(t, filepath.Join(out, "node-000.urls.parquet"))
	if tbl.NumRows() != int64(len(recs)) || groups != 4 {
		t.Errorf("%d rows in %d row groups, want %d in 4", tbl.NumRows(), groups, len(recs))
	}
	if len(codecs) != 1 || !codecs[compress.Codecs.Zstd] {
		t.Errorf("column chunk codecs %v, want zstd only", codecs)
	}
	for k, v := range map[string]string{"crawltrace.kind": KindURLs, "crawltrace.crawl_id": "test-crawl", "crawltrace.node": "0",
		"crawltrace.nodes": "4", "crawltrace.tool_version": ToolVersion, "crawltrace.format": FormatName} {
		if kv[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, kv[k], v)
		}
	}
	url, seq, dest, node := column(t, tbl, "url").(*array.String), column(t, tbl, "seq").(*array.Uint64),
		column(t, tbl, "dest").(*array.Uint16), column(t, tbl, "node").(*array.Uint16)
	ts, tag := column(t, tbl, "time").(*array.Timestamp), column(t, tbl, "tag").(*array.String)
	for i, r := range recs {
		if url.Value(i) != r.URL || seq.Value(i) != r.Seq || dest.Value(i) != r.Dest || node.Value(i) != 0 ||
			int64(ts.Value(i)) != r.Time || tag.IsNull(i) != (r.Tag == "") {
			t.Fatalf("row %d: url %q seq %d dest %d node %d time %d, want %+v", i, url.Value(i), seq.Value(i), dest.Value(i), node.Value(i), ts.Value(i), r)
		}
	}
	ptbl, pkv, _, _ := readParquet(t, filepath.Join(out, "node-000.pages.parquet"))
	if ptbl.NumRows() != 3 || pkv["crawltrace.kind"] != KindPages {
		t.Errorf("pages: %d rows, kind %q", ptbl.NumRows(), pkv["crawltrace.kind"])
	}
	if q := column(t, ptbl, "quality").(*array.Float64); q.Value(0) != 0.5 || !q.IsNull(1) {
		t.Errorf("quality column %v", q)
	}

	// A condensed directory: traces and a results table, by name.
	cond := t.TempDir()
	fps := make([]uint64, CondensedBatchRows+77)
	for i := range fps {
		fps[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	m := testMeta(2)
	m.Subtrace = SubtraceCross
	if err := WriteCondensed(filepath.Join(cond, CondensedName(2, SubtraceCross)), m, fps); err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "policy", Type: arrow.BinaryTypes.String}, {Name: "hits", Type: arrow.PrimitiveTypes.Int64}}, nil))
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"lru", "min"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{7, 9}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	var buf bytes.Buffer
	if err := WriteTable(&buf, rec, TableMeta{Kind: KindReplayResults, Table: "results", CrawlID: "test-crawl", Created: time.Unix(1, 0)}, memory.DefaultAllocator); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	os.WriteFile(filepath.Join(cond, "results.arrow"), buf.Bytes(), 0o644)
	out2 := filepath.Join(t.TempDir(), "pq2")
	files, err = ExportParquet(cond, out2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Kind != ParquetCondensed || files[1].Kind != ParquetTable {
		t.Fatalf("files %+v", files)
	}
	ctbl, ckv, _, _ := readParquet(t, filepath.Join(out2, "node-002.cross.parquet"))
	if ckv["crawltrace.subtrace"] != SubtraceCross || ckv["crawltrace.node"] != "2" || ckv["crawltrace.kind"] != KindCondensed {
		t.Errorf("condensed metadata %v", ckv)
	}
	fp := column(t, ctbl, "fp").(*array.Uint64)
	if fp.Len() != len(fps) {
		t.Fatalf("%d fingerprints, want %d", fp.Len(), len(fps))
	}
	for i, want := range fps {
		if fp.Value(i) != want {
			t.Fatalf("fingerprint %d: %x, want %x", i, fp.Value(i), want)
		}
	}
	ttbl, tkv, _, _ := readParquet(t, filepath.Join(out2, "results.parquet"))
	if h := column(t, ttbl, "hits").(*array.Int64); h.Len() != 2 || h.Value(1) != 9 || tkv["crawltrace.table"] != "results" {
		t.Errorf("table: hits %v, metadata %v", h, tkv)
	}

	// Bad inputs name the file.
	for _, bad := range []string{filepath.Join(crawl, "missing"), filepath.Join(NodeDir(crawl, 0), "urls-000001.arrows")} {
		if _, err := ExportParquet(bad, filepath.Join(t.TempDir(), "x.parquet"), cfg); err == nil || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(bad))) {
			t.Errorf("export %s: %v", bad, err)
		}
	}
}

// peakAlloc tracks the most bytes it had allocated at once.
type peakAlloc struct {
	memory.Allocator
	mu         sync.Mutex
	cur, peak  int64
	allocCalls int
}

func (a *peakAlloc) add(n int64) {
	a.mu.Lock()
	a.cur += n
	a.peak = max(a.peak, a.cur)
	a.allocCalls++
	a.mu.Unlock()
}

func (a *peakAlloc) Allocate(n int) []byte { a.add(int64(n)); return a.Allocator.Allocate(n) }
func (a *peakAlloc) Reallocate(n int, b []byte) []byte {
	a.add(int64(n - len(b)))
	return a.Allocator.Reallocate(n, b)
}
func (a *peakAlloc) Free(b []byte) { a.add(-int64(len(b))); a.Allocator.Free(b) }

// The export streams: the writer's peak memory for a raw log 8 times
// larger is the same (one row group at a time), and the output has the
// row groups of a streaming writer, not one per input.
func TestExportParquetBoundedMemory(t *testing.T) {
	peak := func(rows int) (int64, int) {
		crawl := t.TempDir()
		writeURLs(t, NodeDir(crawl, 0), genURLs(rows, 5), WriterConfig{FlushRows: 1000, SegmentBytes: 256 << 10})
		a := &peakAlloc{Allocator: memory.NewGoAllocator()}
		out := filepath.Join(t.TempDir(), "pq")
		if _, err := ExportParquet(crawl, out, ParquetConfig{RowGroupRows: 8192, Mem: a}); err != nil {
			t.Fatal(err)
		}
		rdr, err := file.OpenParquetFile(filepath.Join(out, "node-000.urls.parquet"), false)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		if rdr.NumRows() != int64(rows) {
			t.Fatalf("%d rows, want %d", rdr.NumRows(), rows)
		}
		return a.peak, rdr.NumRowGroups()
	}
	small, smallGroups := peak(25000)
	big, bigGroups := peak(200000)
	t.Logf("peak %d bytes for 25k rows (%d row groups), %d for 200k (%d)", small, smallGroups, big, bigGroups)
	if smallGroups != 4 || bigGroups != 25 {
		t.Errorf("row groups %d and %d, want 4 and 25 (8192 rows each)", smallGroups, bigGroups)
	}
	if small <= 0 || big > small+small/4 {
		t.Errorf("writer peak grew with the input: %d bytes for 25k rows, %d for 200k", small, big)
	}
}

// Issue 32, case 6: a directory's Parquet export that fails midway leaves
// no Parquet file for a reader globbing *.parquet, and no _SUCCESS; one
// that completes has both. Before, node-000.urls.parquet was final beside
// the failed node's temporary file.
func TestExportParquetAllAtOnce(t *testing.T) {
	crawl := t.TempDir()
	writeURLs(t, NodeDir(crawl, 0), genURLs(500, 3), WriterConfig{FlushRows: 100})
	writeURLs(t, NodeDir(crawl, 1), genURLs(500, 4), WriterConfig{FlushRows: 100})
	out := filepath.Join(t.TempDir(), "pq")
	if _, err := ExportParquet(crawl, out, ParquetConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, ParquetSuccess)); err != nil {
		t.Fatalf("complete export: %v", err)
	}
	// Node 1's segment is damaged: the export fails after node 0's file
	// is written.
	segs, _ := ListSegments(NodeDir(crawl, 1), PrefixURLs)
	b, _ := os.ReadFile(segs[0])
	os.WriteFile(segs[0], append([]byte("garbage!"), b[8:]...), 0o644)
	out2 := filepath.Join(t.TempDir(), "pq")
	_, err := ExportParquet(crawl, out2, ParquetConfig{})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("export of a damaged crawl: %v", err)
	}
	ents, _ := os.ReadDir(out2)
	for _, e := range ents {
		t.Errorf("failed export left %s", e.Name())
	}
	// A failed export over a complete one removes its _SUCCESS first.
	if _, err := ExportParquet(crawl, out, ParquetConfig{}); err == nil {
		t.Fatal("export of a damaged crawl succeeded")
	}
	if _, err := os.Stat(filepath.Join(out, ParquetSuccess)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("_SUCCESS left by a failed export: %v", err)
	}
}
