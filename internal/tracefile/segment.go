package tracefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cespare/xxhash/v2"
)

// Segment file prefixes inside a node directory.
const (
	PrefixURLs  = "urls"
	PrefixPages = "pages"
)

// SegmentExt is the file extension of stream segments.
const SegmentExt = ".arrows"

// eosMarker ends every cleanly closed IPC stream.
var eosMarker = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}

// WriterConfig configures a segmented log writer.
type WriterConfig struct {
	// FlushRows is the number of rows buffered before a record batch is
	// written. Default 65536.
	FlushRows int
	// FlushInterval bounds how long a row may stay buffered. Default 1s.
	FlushInterval time.Duration
	// SegmentBytes rotates to a new segment once the current one holds at
	// least this many bytes. Default 256 MiB.
	SegmentBytes int64
	// Compression is "" (none), "zstd" or "lz4".
	Compression string
	// Allocator for builders; default the Go allocator.
	Allocator memory.Allocator `json:"-"`
}

// DefaultWriterConfig returns the defaults documented on [WriterConfig].
func DefaultWriterConfig() WriterConfig {
	return WriterConfig{FlushRows: 65536, FlushInterval: time.Second, SegmentBytes: 256 << 20}
}

func (c *WriterConfig) fill() {
	d := DefaultWriterConfig()
	if c.FlushRows <= 0 {
		c.FlushRows = d.FlushRows
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = d.FlushInterval
	}
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = d.SegmentBytes
	}
	if c.Allocator == nil {
		c.Allocator = memory.NewGoAllocator()
	}
}

// SegmentName is the file name of segment n (1-based) with prefix.
func SegmentName(prefix string, n int) string {
	return fmt.Sprintf("%s-%06d%s", prefix, n, SegmentExt)
}

// NodeDir is the directory of node inside a crawl directory.
func NodeDir(crawlDir string, node int) string {
	return filepath.Join(crawlDir, fmt.Sprintf("node-%03d", node))
}

// countingWriter counts and hashes (xxhash64, [SegmentInfo.XXH64]) the
// bytes written to a segment, on their way to its buffer.
type countingWriter struct {
	w *bufio.Writer
	n int64
	d *xxhash.Digest
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.d.Write(p[:n])
	return n, err
}

// segWriter writes record batches of one schema to rotating segments.
type segWriter struct {
	dir, prefix string
	schema      *arrow.Schema
	cfg         WriterConfig
	n           int
	f           *os.File
	cw          *countingWriter
	w           *ipc.Writer
	cur         SegmentInfo
	done        []SegmentInfo
}

func newSegWriter(dir, prefix string, schema *arrow.Schema, cfg WriterConfig) (*segWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	s := &segWriter{dir: dir, prefix: prefix, schema: schema, cfg: cfg}
	// Continue numbering after segments already in dir (a resumed node).
	existing, _ := filepath.Glob(filepath.Join(dir, prefix+"-*"+SegmentExt))
	s.n = len(existing)
	return s, s.open()
}

func (s *segWriter) open() error {
	s.n++
	name := SegmentName(s.prefix, s.n)
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	s.f = f
	s.cw = &countingWriter{w: bufio.NewWriterSize(f, 1<<20), d: xxhash.New()}
	opts := []ipc.Option{ipc.WithSchema(s.schema), ipc.WithAllocator(s.cfg.Allocator)}
	switch s.cfg.Compression {
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	}
	s.w = ipc.NewWriter(s.cw, opts...)
	s.cur = SegmentInfo{File: name}
	return nil
}

func (s *segWriter) write(rec arrow.RecordBatch) error {
	if err := s.w.Write(rec); err != nil {
		return fmt.Errorf("tracefile: write %s: %w", s.cur.File, err)
	}
	if err := s.cw.w.Flush(); err != nil {
		return fmt.Errorf("tracefile: write %s: %w", s.cur.File, err)
	}
	s.cur.Rows += rec.NumRows()
	s.cur.Batches++
	s.cur.Bytes = s.cw.n
	if s.cw.n >= s.cfg.SegmentBytes {
		if err := s.closeSeg(); err != nil {
			return err
		}
		return s.open()
	}
	return nil
}

func (s *segWriter) closeSeg() error {
	err := s.w.Close()
	if ferr := s.cw.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.cur.Bytes = s.cw.n
	s.cur.Clean = err == nil
	if err != nil {
		s.cur.Error = err.Error()
	} else {
		s.cur.XXH64 = HashString(s.cw.d.Sum64())
	}
	s.done = append(s.done, s.cur)
	if err != nil {
		return fmt.Errorf("tracefile: close %s: %w", s.cur.File, err)
	}
	return nil
}

func (s *segWriter) segments() []SegmentInfo {
	out := append([]SegmentInfo(nil), s.done...)
	if s.f != nil {
		cur := s.cur
		out = append(out, cur)
	}
	return out
}

// URLWriter appends rows to a node's raw URL log. It assigns seq numbers,
// batches rows, and rotates segments. It is not safe for concurrent use: one
// goroutine owns it (producers send to that goroutine over a channel).
type URLWriter struct {
	logWriter
	seq       *array.Uint64Builder
	tm        *array.TimestampBuilder
	url, kind *array.StringBuilder
	tag       *array.StringBuilder
	src       *array.Uint64Builder
	worker    *array.Uint16Builder
	dest      *array.Uint16Builder
	nextSeq   uint64
}

// CreateURLWriter starts a raw URL log in nodeDir.
func CreateURLWriter(nodeDir string, m Meta, cfg WriterConfig) (*URLWriter, error) {
	lw, err := newLogWriter(nodeDir, PrefixURLs, URLSchema(m), cfg)
	if err != nil {
		return nil, err
	}
	w := &URLWriter{logWriter: lw}
	w.logWriter.reserve = w.reserve
	b := w.b
	w.seq = b.Field(0).(*array.Uint64Builder)
	w.tm = b.Field(1).(*array.TimestampBuilder)
	w.url = b.Field(2).(*array.StringBuilder)
	w.kind = b.Field(3).(*array.StringBuilder)
	w.tag = b.Field(4).(*array.StringBuilder)
	w.src = b.Field(5).(*array.Uint64Builder)
	w.worker = b.Field(6).(*array.Uint16Builder)
	w.dest = b.Field(7).(*array.Uint16Builder)
	w.reserve(1024)
	return w, nil
}

// Append adds one URL; its Seq field is ignored and assigned. It returns the
// assigned sequence number.
func (w *URLWriter) Append(r URLRecord) (uint64, error) {
	s := w.nextSeq
	w.nextSeq++
	w.seq.Append(s)
	w.tm.Append(arrow.Timestamp(r.Time))
	w.url.Append(r.URL)
	w.kind.Append(r.Kind)
	if r.Tag == "" {
		w.tag.AppendNull()
	} else {
		w.tag.Append(r.Tag)
	}
	w.src.Append(r.Source)
	w.worker.Append(r.Worker)
	w.dest.Append(r.Dest)
	return s, w.added()
}

// Rows is the number of rows appended so far.
func (w *URLWriter) Rows() uint64 { return w.nextSeq }

// SetNextSeq sets the sequence number of the next row (a resumed crawl
// continues its node's numbering). Call it before the first Append.
func (w *URLWriter) SetNextSeq(n uint64) { w.nextSeq = n }

// reserve sizes the builders for the next batch like the last one, so
// appends do not regrow buffers.
func (w *URLWriter) reserve(n int) {
	n = min(max(n, 1024), w.seg.cfg.FlushRows)
	w.b.Reserve(n)
	w.url.ReserveData(n * 64)
	w.kind.ReserveData(n * 4)
	w.tag.ReserveData(n * 2)
}

// PageWriter appends rows to a node's page log. Not safe for concurrent use.
type PageWriter struct {
	logWriter
}

// CreatePageWriter starts a page log in nodeDir.
func CreatePageWriter(nodeDir string, m Meta, cfg WriterConfig) (*PageWriter, error) {
	lw, err := newLogWriter(nodeDir, PrefixPages, PageSchema(m), cfg)
	if err != nil {
		return nil, err
	}
	return &PageWriter{lw}, nil
}

func appendOptString(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
	} else {
		b.Append(s)
	}
}

// Append adds one page row.
func (w *PageWriter) Append(p PageRecord) error {
	b := w.b
	b.Field(0).(*array.Uint64Builder).Append(p.ID)
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(p.Time))
	b.Field(2).(*array.StringBuilder).Append(p.URL)
	b.Field(3).(*array.Int32Builder).Append(p.Status)
	appendOptString(b.Field(4).(*array.StringBuilder), p.ContentType)
	b.Field(5).(*array.Int64Builder).Append(p.Bytes)
	b.Field(6).(*array.BooleanBuilder).Append(p.Truncated)
	b.Field(7).(*array.Int64Builder).Append(p.DurationNS)
	b.Field(8).(*array.Uint32Builder).Append(p.Links)
	b.Field(9).(*array.Uint32Builder).Append(p.UniqueLinks)
	appendOptString(b.Field(10).(*array.StringBuilder), p.Redirect)
	appendOptString(b.Field(11).(*array.StringBuilder), p.Error)
	b.Field(12).(*array.Uint16Builder).Append(p.Worker)
	q := b.Field(13).(*array.Float64Builder)
	if p.Quality != p.Quality { // NaN
		q.AppendNull()
	} else {
		q.Append(p.Quality)
	}
	return w.added()
}

// logWriter is what the URL and page log writers share: a record builder
// whose rows are flushed as batches to rotating segments.
type logWriter struct {
	seg       *segWriter
	b         *array.RecordBuilder
	pending   int
	lastFlush time.Time
	closed    bool
	reserve   func(n int) // optional: presize builders after a flush of n rows
}

// newLogWriter starts a log of prefix's segments in nodeDir, its rows
// built with schema.
func newLogWriter(nodeDir, prefix string, schema *arrow.Schema, cfg WriterConfig) (logWriter, error) {
	cfg.fill()
	seg, err := newSegWriter(nodeDir, prefix, schema, cfg)
	if err != nil {
		return logWriter{}, err
	}
	return logWriter{seg: seg, b: array.NewRecordBuilder(cfg.Allocator, schema), lastFlush: time.Now()}, nil
}

// added counts one appended row and flushes when the batch is full or,
// checked every 256 rows to keep the clock off the hot path, when it is
// older than FlushInterval.
func (w *logWriter) added() error {
	w.pending++
	if w.pending >= w.seg.cfg.FlushRows || (w.pending&255 == 0 && time.Since(w.lastFlush) >= w.seg.cfg.FlushInterval) {
		return w.Flush()
	}
	return nil
}

// FlushIfDue writes the buffered rows if FlushInterval has passed since the
// last flush. The owning goroutine calls it from a ticker when idle.
func (w *logWriter) FlushIfDue(now time.Time) error {
	if w.pending > 0 && now.Sub(w.lastFlush) >= w.seg.cfg.FlushInterval {
		return w.Flush()
	}
	return nil
}

// Flush writes the buffered rows as one record batch.
func (w *logWriter) Flush() error {
	w.lastFlush = time.Now()
	if w.pending == 0 {
		return nil
	}
	n := w.pending
	rec := w.b.NewRecordBatch()
	defer rec.Release()
	w.pending = 0
	if w.reserve != nil {
		w.reserve(n)
	}
	return w.seg.write(rec)
}

// Segments describes the segments written so far.
func (w *logWriter) Segments() []SegmentInfo { return w.seg.segments() }

// Checkpoint writes the buffered rows as a batch, flushes them to the
// file and syncs it, and returns the closed segments and the open one's
// position: its file, bytes (a batch boundary), rows, batches and the
// xxhash64 of those bytes. An open
// segment with no batch yet may hold no schema either (Bytes 0). The
// writer goes on appending after it.
func (w *logWriter) Checkpoint() (done []SegmentInfo, open SegmentInfo, err error) {
	if err := w.Flush(); err != nil {
		return nil, SegmentInfo{}, err
	}
	s := w.seg
	if s.f != nil {
		if err := s.cw.w.Flush(); err != nil {
			return nil, SegmentInfo{}, fmt.Errorf("tracefile: write %s: %w", s.cur.File, err)
		}
		if err := s.f.Sync(); err != nil {
			return nil, SegmentInfo{}, fmt.Errorf("tracefile: sync %s: %w", s.cur.File, err)
		}
		open = s.cur
		open.Bytes = s.cw.n
		open.XXH64 = HashString(s.cw.d.Sum64())
	}
	return append([]SegmentInfo(nil), s.done...), open, nil
}

// Continue makes a writer opened in a node directory that already holds
// segments (a resumed crawl) report those segments first, as if it had
// written them: prior is what [logWriter.Checkpoint] or Segments returned
// for them. The writer's own segments are numbered after every segment
// file present in the directory when it was created.
func (w *logWriter) Continue(prior []SegmentInfo) {
	w.seg.done = append(append([]SegmentInfo(nil), prior...), w.seg.done...)
}

// Close flushes and ends the current segment cleanly.
func (w *logWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.Flush()
	if cerr := w.seg.closeSeg(); err == nil {
		err = cerr
	}
	w.seg.f = nil
	w.b.Release()
	return err
}

// CutSegmentAt ends the segment at path after its first size bytes, which
// must end on a batch boundary (a position [logWriter.Checkpoint]
// returned), with an end-of-stream marker, so that it closes cleanly with
// the rows written up to that point. The original file, rows after size
// included, is first moved to keep (its directory is created), so no
// written byte is lost. The new file is written under a temporary name,
// synced and renamed into place.
func CutSegmentAt(path string, size int64, keep string) error {
	src, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	defer src.Close()
	tmp := path + ".tmp"
	dst, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	n, err := io.Copy(dst, io.NewSectionReader(src, 0, size))
	if err == nil && n != size {
		err = fmt.Errorf("%w: %s: %d bytes, want at least %d", ErrCorrupt, path, n, size)
	}
	if err == nil {
		_, err = dst.Write(eosMarker)
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(keep), 0o755)
	}
	if err == nil {
		err = os.Rename(path, keep)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("tracefile: cut %s at %d: %w", path, size, err)
	}
	return nil
}

// errCutSchema marks a segment that ends inside its schema message: a
// writer killed right after creating it. Node readers treat it as a cut
// segment with no rows.
var errCutSchema = fmt.Errorf("%w: segment cut inside its schema", ErrCorrupt)

// IsCutSchema reports whether err is a segment cut before its schema was
// complete (a crash right after rotation), which holds no rows.
func IsCutSchema(err error) bool { return errors.Is(err, errCutSchema) }

// SegmentInfo describes one stream segment.
type SegmentInfo struct {
	File    string `json:"file"`
	Rows    int64  `json:"rows"`
	Batches int    `json:"batches"`
	Bytes   int64  `json:"bytes"`
	Clean   bool   `json:"clean"`           // ended with the end-of-stream marker
	Error   string `json:"error,omitempty"` // why the segment was cut, when known
	// XXH64 is the xxhash64 of the segment's first Bytes bytes, 16
	// lowercase hex digits ([HashString]), computed by its writer as it
	// wrote them: of the whole file for a segment closed cleanly, of the
	// checkpointed prefix for the open segment of a checkpoint. Empty for
	// a segment written before crawltrace recorded it, or one whose close
	// failed. [VerifySegment] checks a file against it.
	XXH64 string `json:"xxhash64,omitempty"`
}

// SegmentReader reads one stream segment batch by batch. A cut segment
// yields every complete batch; after Next returns false, Info reports
// whether the segment ended cleanly. It is not safe for concurrent use.
type SegmentReader struct {
	path string
	f    *os.File
	rd   *countingReader // every read of f goes through it
	r    *ipc.Reader
	meta Meta
	kind string
	cur  arrow.RecordBatch
	info SegmentInfo
	size int64
	scan frameScan
	done bool
	// NextURLs' own frame reader: whether it is used, where the next
	// message starts, and its reused buffers.
	raw, rawInit     bool
	rawOff           int64
	rawMeta, rawBody []byte
	// seg is the segment mapped whole (from offset 0) while batch bodies
	// are served from it, segMapping the mapping to release, and dropped
	// how far its pages were given back (see mappedBody).
	seg, segMapping []byte
	dropped         int64
	noMap           bool // mapping failed once: read instead
	rawOffs         []int32
	rawDest         []uint16
	cols            URLColumns
	src             *prefixReader
	// Restrict's range: the batches read start in [start, end) (end is
	// scan.validEnd unrestricted); tail: this reader reports how the
	// segment ended; rowsBefore and batchesBefore: the rows and batches
	// before start.
	restricted    bool
	start, end    int64
	tail          bool
	rowsBefore    int64
	batchesBefore int
}

// countingReader counts the bytes read through it (and, added by
// NextURLs, the bytes of the batch bodies it maps instead that it would
// have read).
type countingReader struct {
	r io.ReaderAt
	n int64
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.n += int64(n)
	return n, err
}

// BytesRead is how many bytes of the file the reader has read so far,
// counting of a batch body NextURLs mapped instead of reading the bytes
// it would have read: the input volume a condense reports (a mapped body
// does not show in the process's read counters).
func (s *SegmentReader) BytesRead() int64 { return s.rd.n }

// prefixReader reads r from offset 0 up to limit, which may grow.
// prefixReader reads r from off up to limit; at jumpAt (when set) it
// skips to jumpTo.
type prefixReader struct {
	r              io.ReaderAt
	off, limit     int64
	jumpAt, jumpTo int64
}

func (p *prefixReader) Read(b []byte) (int, error) {
	if p.jumpTo > p.jumpAt && p.off == p.jumpAt {
		p.off = p.jumpTo
	}
	if p.off >= p.limit {
		return 0, io.EOF
	}
	if int64(len(b)) > p.limit-p.off {
		b = b[:p.limit-p.off]
	}
	if p.jumpTo > p.jumpAt && p.off < p.jumpAt && int64(len(b)) > p.jumpAt-p.off {
		b = b[:p.jumpAt-p.off]
	}
	n, err := p.r.ReadAt(b, p.off)
	p.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// OpenSegment opens a stream segment of the given kind (KindURLs or
// KindPages). It fails with ErrCorrupt when the file does not start with a
// valid crawltrace schema of that kind.
func OpenSegment(path, kind string) (*SegmentReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, InputError(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	s := &SegmentReader{path: path, f: f, rd: &countingReader{r: f}, kind: kind, size: st.Size(), info: SegmentInfo{File: filepath.Base(path), Bytes: st.Size()}}
	if err := s.openIPC(); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *SegmentReader) openIPC() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: not an Arrow stream (%v)", ErrCorrupt, s.path, p)
		}
	}()
	if s.size == 0 {
		// Created, then killed before the schema reached the disk.
		return fmt.Errorf("%w: %s: 0-byte file", errCutSchema, s.path)
	}
	s.scan = scanFrames(s.rd, s.size)
	if s.scan.messages == 0 && s.scan.truncated {
		return fmt.Errorf("%w: %s: cut before its schema was complete (%s)", errCutSchema, s.path, s.scan.stop)
	}
	if s.scan.messages == 0 {
		why := s.scan.stop
		if why == "" {
			why = "no schema message"
		}
		return fmt.Errorf("%w: %s: not an Arrow stream (%s)", ErrCorrupt, s.path, why)
	}
	// The reader sees only the prefix whose framing was checked, and only
	// the schema until Next asks for batches (NextURLs reads them itself).
	s.src = &prefixReader{r: s.rd, limit: s.scan.schemaEnd}
	r, err := ipc.NewReader(bufio.NewReaderSize(s.src, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: not an Arrow stream (%v)", ErrCorrupt, s.path, err)
	}
	s.r = r
	m, err := checkSchema(s.path, r.Schema(), s.kind)
	if err != nil {
		r.Release()
		return err
	}
	s.meta = m
	s.end = s.scan.validEnd
	s.tail = true
	return nil
}

// Restrict limits Next and NextURLs to the record batches whose messages
// start at file offsets in [lo, hi), for one of several readers that share
// the segment (map tasks of a sharded condense, each reading a byte range
// of the input). Info then describes the range: Bytes is the part of the
// file inside [lo, hi), Rows the rows read. Only the reader whose range
// holds the start of the segment's last complete batch (or, in a segment
// with none, offset 0) reports how the segment ended ([SegmentReader.Tail]);
// the others' Info is clean unless a batch of theirs is corrupt. A reader
// that stops at a corrupt batch reports the segment's end too (Tail is
// then true): an unrestricted reader stops there, and the readers of the
// ranges after it read what it never reaches (a sharded condense's merge
// drops that). Call it before the first Next or NextURLs.
func (s *SegmentReader) Restrict(lo, hi int64) {
	lo, hi = min(max(lo, 0), s.size), min(max(hi, 0), s.size)
	s.restricted = true
	s.info.Bytes = max(hi-lo, 0)
	// The range's batches: from the first starting at or after lo to the
	// first starting at or after hi (exclusive).
	s.start, s.end, s.rowsBefore = s.scan.validEnd, s.scan.validEnd, 0
	bs := s.scan.batches
	i := 0
	for ; i < len(bs) && bs[i].off < lo; i++ {
		s.rowsBefore += bs[i].rows
	}
	s.batchesBefore = i
	if i < len(bs) {
		s.start = bs[i].off
	}
	for ; i < len(bs) && bs[i].off < hi; i++ {
	}
	if i < len(bs) {
		s.end = bs[i].off
	}
	if n := len(s.scan.batches); n > 0 {
		last := s.scan.batches[n-1].off
		s.tail = last >= lo && last < hi
	} else {
		s.tail = lo == 0
	}
	s.src.jumpAt, s.src.jumpTo = s.scan.schemaEnd, s.start
}

// Tail reports whether this reader reports how the segment ended: always,
// unless [SegmentReader.Restrict] gave it a range without the segment's
// last complete batch and it did not stop at a corrupt batch. Final once
// Next has returned false.
func (s *SegmentReader) Tail() bool { return s.tail }

// RowsBefore is the number of rows in the segment's complete batches
// before the range [SegmentReader.Restrict] set (0 unrestricted).
func (s *SegmentReader) RowsBefore() int64 { return s.rowsBefore }

// Meta returns the segment's schema metadata.
func (s *SegmentReader) Meta() Meta { return s.meta }

// Schema returns the segment's schema.
func (s *SegmentReader) Schema() *arrow.Schema { return s.r.Schema() }

// Next advances to the next complete record batch.
func (s *SegmentReader) Next() (ok bool) {
	if s.done {
		return false
	}
	s.src.limit = s.end
	defer func() {
		if p := recover(); p != nil {
			s.finish(fmt.Errorf("corrupt batch: %v", p))
			ok = false
		}
	}()
	if s.r.Next() {
		if err := validateBatch(s.r.RecordBatch()); err != nil {
			s.finish(fmt.Errorf("corrupt batch %d: %w", s.batchesBefore+s.info.Batches, err))
			return false
		}
		s.cur = s.r.RecordBatch()
		s.info.Rows += s.cur.NumRows()
		s.info.Batches++
		return true
	}
	s.cur = nil
	s.finish(s.r.Err())
	return false
}

func (s *SegmentReader) finish(err error) {
	s.done = true
	s.cur = nil
	if err != nil && err != io.EOF {
		// Reading the segment from its start stops here too: this
		// reader's range holds where the segment ends for it.
		s.tail = true
		s.info.Clean = false
		s.info.Error = err.Error()
		return
	}
	if !s.tail {
		// A range that ends before the segment's last batch: complete.
		s.info.Clean = true
		return
	}
	// The stream reader stops silently at a batch boundary: only the
	// end-of-stream marker tells a clean end from a cut.
	s.info.Clean = s.scan.eos
	if !s.info.Clean {
		s.info.Error = "no end-of-stream marker (writer did not close the segment)"
		if s.scan.stop != "" {
			s.info.Error = s.scan.stop
		}
	}
}

// Record is the current batch, valid until the next call to Next.
func (s *SegmentReader) Record() arrow.RecordBatch { return s.cur }

// Info describes the segment; Clean and Error are final once Next has
// returned false.
func (s *SegmentReader) Info() SegmentInfo { return s.info }

// Close releases the reader; the strings of its last URLColumns are
// invalid from then on.
func (s *SegmentReader) Close() error {
	s.unmapSegment()
	s.releaseBody()
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
	return s.f.Close()
}

// ListSegments returns the paths of a node directory's segments with prefix,
// in order.
func ListSegments(nodeDir, prefix string) ([]string, error) {
	ents, err := os.ReadDir(nodeDir)
	if err != nil {
		return nil, InputError(err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() && strings.HasPrefix(n, prefix+"-") && strings.HasSuffix(n, SegmentExt) {
			out = append(out, filepath.Join(nodeDir, n))
		}
	}
	sort.Strings(out)
	return out, nil
}
