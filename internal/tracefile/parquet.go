package tracefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetExt is the file extension of Parquet exports.
const ParquetExt = ".parquet"

// Kinds of the Parquet files [ExportParquet] writes, as [ParquetFile.Kind].
const (
	ParquetURLs      = KindURLs      // a node's raw URL log
	ParquetPages     = KindPages     // a node's page log
	ParquetCondensed = KindCondensed // a condensed trace
	ParquetTable     = "table"       // a results table (replay results, scenario tables)
)

// ParquetConfig configures Parquet output. Every column is zstd-compressed.
type ParquetConfig struct {
	// RowGroupRows caps the rows of a row group (default 1<<17, near
	// DuckDB's own 122,880): readers stream and parallelize over row
	// groups, and the writer holds one encoded row group in memory.
	RowGroupRows int64
	// RowGroupBytes caps the compressed bytes of a row group (default 64
	// MiB), which bounds the writer's memory when rows are long.
	RowGroupBytes int64
	// Mem allocates the writer's buffers (default memory.DefaultAllocator).
	Mem memory.Allocator
	// staged, when set, collects the files a directory's export wrote
	// under their temporary names, to be renamed together (exportDir).
	staged *[]string
}

// DefaultParquetConfig returns the defaults documented on [ParquetConfig].
func DefaultParquetConfig() ParquetConfig {
	return ParquetConfig{RowGroupRows: 1 << 17, RowGroupBytes: 64 << 20, Mem: memory.DefaultAllocator}
}

func (c *ParquetConfig) fill() {
	d := DefaultParquetConfig()
	if c.RowGroupRows <= 0 {
		c.RowGroupRows = d.RowGroupRows
	}
	if c.RowGroupBytes <= 0 {
		c.RowGroupBytes = d.RowGroupBytes
	}
	if c.Mem == nil {
		c.Mem = d.Mem
	}
}

// ParquetWriter writes record batches of one schema to a Parquet file with
// arrow-go's pqarrow, batch by batch: a row group is buffered (encoded and
// compressed) until it reaches [ParquetConfig.RowGroupRows] rows or
// [ParquetConfig.RowGroupBytes] bytes, then written out, so memory does not
// grow with the input. The schema's metadata becomes the file's key-value
// metadata. The file is written under a temporary name and renamed into
// place by Close. It is not safe for concurrent use.
type ParquetWriter struct {
	path, tmp string
	f         *os.File
	fw        *pqarrow.FileWriter
	cfg       ParquetConfig
	rows      int64
}

// CreateParquet starts a Parquet file at path for batches of schema.
func CreateParquet(path string, schema *arrow.Schema, cfg ParquetConfig) (*ParquetWriter, error) {
	cfg.fill()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(cfg.Mem),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(cfg.RowGroupRows),
		parquet.WithCreatedBy("crawltrace "+ToolVersion),
	)
	fw, err := pqarrow.NewFileWriter(schema, f, props,
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(cfg.Mem), pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("tracefile: parquet %s: %w", path, err)
	}
	return &ParquetWriter{path: path, tmp: tmp, f: f, fw: fw, cfg: cfg}, nil
}

// Write appends rec's rows. rec is not retained.
func (w *ParquetWriter) Write(rec arrow.RecordBatch) error {
	if w.fw.RowGroupTotalCompressedBytes() >= w.cfg.RowGroupBytes {
		if err := w.fw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("tracefile: parquet %s: %w", w.path, err)
		}
	}
	if err := w.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("tracefile: parquet %s: %w", w.path, err)
	}
	w.rows += rec.NumRows()
	return nil
}

// Rows is the number of rows written so far.
func (w *ParquetWriter) Rows() int64 { return w.rows }

// Close writes the last row group and the footer and renames the file into
// place.
func (w *ParquetWriter) Close() error {
	// pqarrow's Close closes the file too.
	err := w.fw.Close()
	if err == nil && w.cfg.staged != nil {
		// Part of a directory's export: renamed with the others.
		*w.cfg.staged = append(*w.cfg.staged, w.path)
		return nil
	}
	if err == nil {
		err = os.Rename(w.tmp, w.path)
	}
	if err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("tracefile: parquet %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file being written.
func (w *ParquetWriter) Abort() {
	w.fw.Close()
	w.f.Close()
	os.Remove(w.tmp)
}

// ParquetFile is one file written by [ExportParquet].
type ParquetFile struct {
	Path string
	Kind string // ParquetURLs, ParquetPages, ParquetCondensed or ParquetTable
	Node int    // the crawler node, for URL and page logs and condensed traces
	Rows int64
	// Cut lists the input segments that were cut (their complete batches
	// are exported; see [SegmentInfo]).
	Cut []SegmentInfo
}

// ExportParquet writes the crawltrace input at in as Parquet and returns
// the files written. in is one of:
//
//   - a crawl directory: out is a directory that receives, per node,
//     node-NNN.urls.parquet (the raw URL log) and node-NNN.pages.parquet
//     (the page log, when the node has one), each with a leading node
//     column (uint16) so that several nodes' files can be queried together;
//   - a directory of crawltrace Arrow files (condensed traces, results
//     tables): out is a directory, and NAME.arrow becomes NAME.parquet;
//   - one crawltrace Arrow file (a condensed trace or a results table): out
//     is the Parquet file.
//
// Columns keep their Arrow types (uint64 fingerprints, timestamp[ns, UTC]
// times); the schema metadata (crawl id, node, subtrace, tool version, ...)
// is carried into each file's key-value metadata. Every input is read one
// record batch at a time.
func ExportParquet(in, out string, cfg ParquetConfig) ([]ParquetFile, error) {
	cfg.fill()
	st, err := os.Stat(in)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: no such file or directory", ErrBadInput, in)
		}
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	if !st.IsDir() {
		f, err := exportArrowFile(in, out, cfg)
		if err != nil {
			return nil, err
		}
		return []ParquetFile{f}, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	// A directory's files become visible together (see exportDir).
	success := filepath.Join(out, ParquetSuccess)
	if err := os.Remove(success); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	var staged []string
	cfg.staged = &staged
	files, err := exportDir(in, out, cfg)
	if err == nil {
		for i, p := range staged {
			if err = os.Rename(p+".tmp", p); err != nil {
				staged = staged[i:]
				break
			}
		}
	}
	if err != nil {
		for _, p := range staged {
			os.Remove(p + ".tmp")
		}
		return files, err
	}
	if err := WriteFileDurable(success, func(io.Writer) error { return nil }); err != nil {
		return files, err
	}
	return files, nil
}

// ParquetSuccess is the empty file a directory's Parquet export writes
// last, once every Parquet file of it is in place (Spark's convention).
const ParquetSuccess = "_SUCCESS"

// exportDir exports the crawl directory or directory of Arrow files in
// into the directory out, every Parquet file left under its temporary
// name: [ExportParquet] renames them all into place once every one is
// written, then writes [ParquetSuccess], so that a reader globbing
// out/*.parquet never sees part of an export, and one that checks
// _SUCCESS knows it is whole.
func exportDir(in, out string, cfg ParquetConfig) ([]ParquetFile, error) {
	if _, err := CrawlNodes(in); err == nil {
		return exportCrawl(in, out, cfg)
	}
	ents, err := os.ReadDir(in)
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	var files []ParquetFile
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".arrow") {
			continue
		}
		f, err := exportArrowFile(filepath.Join(in, e.Name()), filepath.Join(out, strings.TrimSuffix(e.Name(), ".arrow")+ParquetExt), cfg)
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s: neither a crawl directory nor a directory of crawltrace .arrow files", ErrBadInput, in)
	}
	return files, nil
}

// exportArrowFile exports a condensed trace or a results table.
func exportArrowFile(in, out string, cfg ParquetConfig) (ParquetFile, error) {
	kind, err := arrowKind(in)
	if err != nil {
		return ParquetFile{}, err
	}
	switch {
	case kind == KindCondensed:
		return exportCondensed(in, out, cfg)
	case IsTableKind(kind):
		return exportTable(in, out, cfg)
	}
	return ParquetFile{}, fmt.Errorf("%w: %s: a %q file; export takes crawl directories, condensed traces and results tables", ErrBadInput, in, kind)
}

func exportCondensed(in, out string, cfg ParquetConfig) (ParquetFile, error) {
	r, err := OpenCondensed(in)
	if err != nil {
		return ParquetFile{}, err
	}
	defer r.Close()
	schema := CondensedSchema(r.Meta())
	w, err := CreateParquet(out, schema, cfg)
	if err != nil {
		return ParquetFile{}, err
	}
	for r.Next() {
		fps := r.FPs()
		// The fingerprints are borrowed zero-copy from the mapped file.
		data := array.NewData(arrow.PrimitiveTypes.Uint64, len(fps),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Uint64Traits.CastToBytes(fps))}, nil, 0, 0)
		col := array.NewUint64Data(data)
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(fps)))
		err := w.Write(rec)
		rec.Release()
		col.Release()
		data.Release()
		if err != nil {
			w.Abort()
			return ParquetFile{}, err
		}
	}
	if err := r.Err(); err != nil {
		w.Abort()
		return ParquetFile{}, err
	}
	if err := w.Close(); err != nil {
		return ParquetFile{}, err
	}
	return ParquetFile{Path: out, Kind: ParquetCondensed, Node: r.Meta().Node, Rows: w.Rows()}, nil
}

func exportTable(in, out string, cfg ParquetConfig) (pf ParquetFile, err error) {
	// A table is one small batch: proved whole before it is exported.
	if _, err := VerifyChecksum(in); err != nil {
		return ParquetFile{}, err
	}
	f, err := os.Open(in)
	if err != nil {
		return ParquetFile{}, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(cfg.Mem))
	if err != nil {
		return ParquetFile{}, fmt.Errorf("%w: %s: not an Arrow file (%v)", ErrCorrupt, in, err)
	}
	defer r.Close()
	w, err := CreateParquet(out, r.Schema(), cfg)
	if err != nil {
		return ParquetFile{}, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: corrupt batch (%v)", ErrCorrupt, in, p)
		}
		if err != nil {
			w.Abort()
		}
	}()
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return ParquetFile{}, fmt.Errorf("%w: %s: batch %d: %v", ErrCorrupt, in, i, err)
		}
		if err := w.Write(rec); err != nil {
			return ParquetFile{}, err
		}
	}
	if err := w.Close(); err != nil {
		return ParquetFile{}, err
	}
	return ParquetFile{Path: out, Kind: ParquetTable, Rows: w.Rows()}, nil
}

// exportCrawl writes each node's URL and page logs.
func exportCrawl(in, out string, cfg ParquetConfig) ([]ParquetFile, error) {
	nodes, err := CrawlNodes(in)
	if err != nil {
		return nil, err
	}
	var files []ParquetFile
	for _, n := range nodes {
		for _, k := range []struct{ prefix, kind string }{{PrefixURLs, KindURLs}, {PrefixPages, KindPages}} {
			f, ok, err := exportLog(in, n, k.prefix, k.kind, filepath.Join(out, fmt.Sprintf("node-%03d.%s%s", n, k.kind, ParquetExt)), cfg)
			if err != nil {
				return files, err
			}
			if ok {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s: no URL or page log segments", ErrBadInput, in)
	}
	return files, nil
}

// exportLog streams one node's segments of one log (prefix, kind) into out,
// with a node column in front. ok is false when the node has no segments
// of that log.
func exportLog(crawlDir string, node int, prefix, kind, out string, cfg ParquetConfig) (pf ParquetFile, ok bool, err error) {
	paths, err := ListSegments(NodeDir(crawlDir, node), prefix)
	if err != nil || len(paths) == 0 {
		return ParquetFile{}, false, err
	}
	var want map[string]int64
	if kind == KindURLs {
		if want, err = ManifestSegmentRows(crawlDir, node); err != nil {
			return ParquetFile{}, false, err
		}
	}
	pf = ParquetFile{Path: out, Kind: kind, Node: node}
	var (
		w      *ParquetWriter
		schema *arrow.Schema
		nodes  *array.Uint16 // a column of node numbers, sliced per batch
	)
	defer func() {
		if nodes != nil {
			nodes.Release()
		}
		if err != nil && w != nil {
			w.Abort()
		}
	}()
	for _, p := range paths {
		s, err := OpenSegment(p, kind)
		if IsCutSchema(err) {
			pf.Cut = append(pf.Cut, SegmentInfo{File: filepath.Base(p), Error: err.Error()})
			continue
		}
		if err != nil {
			return ParquetFile{}, false, err
		}
		if w != nil && !arrow.NewSchema(schema.Fields()[1:], nil).Equal(arrow.NewSchema(s.Schema().Fields(), nil)) {
			s.Close()
			return ParquetFile{}, false, fmt.Errorf("%w: %s: columns differ from the node's first segment", ErrCorrupt, p)
		}
		if w == nil {
			m := s.Meta()
			m.Node = node
			schema = withNodeColumn(s.Schema(), m, kind)
			if w, err = CreateParquet(out, schema, cfg); err != nil {
				s.Close()
				return ParquetFile{}, false, err
			}
		}
		for s.Next() {
			rec := s.Record()
			n := int(rec.NumRows())
			if nodes == nil || nodes.Len() < n {
				if nodes != nil {
					nodes.Release()
				}
				nodes = constUint16(cfg.Mem, uint16(node), max(n, 1<<16))
			}
			col := array.NewSlice(nodes, 0, int64(n))
			withNode := array.NewRecordBatch(schema, append([]arrow.Array{col}, rec.Columns()...), int64(n))
			err := w.Write(withNode)
			withNode.Release()
			col.Release()
			if err != nil {
				s.Close()
				return ParquetFile{}, false, err
			}
		}
		si := s.Info()
		s.Close()
		if want != nil {
			si = CheckSegmentRows(si, want)
		}
		if !si.Clean {
			pf.Cut = append(pf.Cut, si)
		}
	}
	if w == nil {
		return ParquetFile{}, false, fmt.Errorf("%w: %s: every %s segment was cut before its schema", ErrBadInput, NodeDir(crawlDir, node), prefix)
	}
	pf.Rows = w.Rows()
	if err := w.Close(); err != nil {
		w = nil
		return ParquetFile{}, false, err
	}
	return pf, true, nil
}

// withNodeColumn is a log schema with a leading uint16 node column and
// metadata m.
func withNodeColumn(s *arrow.Schema, m Meta, kind string) *arrow.Schema {
	m.Kind = kind
	md := m.metadata()
	fields := append([]arrow.Field{{Name: "node", Type: arrow.PrimitiveTypes.Uint16}}, s.Fields()...)
	return arrow.NewSchema(fields, &md)
}

func constUint16(mem memory.Allocator, v uint16, n int) *array.Uint16 {
	b := array.NewUint16Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for range n {
		b.UnsafeAppend(v)
	}
	return b.NewUint16Array()
}
