package tracefile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cespare/xxhash/v2"
)

// CondensedBatchRows is the number of fingerprints per record batch in a
// condensed trace.
const CondensedBatchRows = 1 << 18

// CondensedSchema returns the schema of a condensed trace with metadata m.
func CondensedSchema(m Meta) *arrow.Schema {
	m.Kind = KindCondensed
	md := m.metadata()
	return arrow.NewSchema([]arrow.Field{{Name: "fp", Type: arrow.PrimitiveTypes.Uint64}}, &md)
}

// CondensedName is the file name of node's condensed subtrace.
func CondensedName(node int, subtrace string) string {
	return fmt.Sprintf("node-%03d.%s.arrow", node, subtrace)
}

// CondensedWriter writes a condensed trace. The file is written under a
// temporary name and renamed into place by Close, so a crash never leaves a
// file that looks complete. It is not safe for concurrent use.
type CondensedWriter struct {
	path, tmp string
	dw        *directWriter
	fp        *footerPatcher
	w         *ipc.FileWriter
	buf       []uint64
	mem       memory.Allocator
	schema    *arrow.Schema
	rows      int64
	closed    bool
}

// CreateCondensed creates a condensed trace at path with metadata m. It
// gathers what it writes in up to four 1 MiB buffers (see
// CreateCondensedBuffered).
func CreateCondensed(path string, m Meta) (*CondensedWriter, error) {
	return CreateCondensedBuffered(path, m, directBuf)
}

// CreateCondensedBuffered is CreateCondensed with buffers of buf bytes
// (rounded up to 4 KiB, at least 64 KiB): it holds up to four of them,
// one filled while the others are written. A program that writes many
// traces at once under a memory budget sizes them from it.
func CreateCondensedBuffered(path string, m Meta, buf int) (*CondensedWriter, error) {
	tmp := path + ".tmp"
	dw, err := createDirect(tmp, buf)
	if err != nil {
		return nil, fmt.Errorf("tracefile: create %s: %w", path, err)
	}
	mem := memory.NewGoAllocator()
	m.Checksum = checksumPending // the footer's schema gets the real one
	schema := CondensedSchema(m)
	fp := &footerPatcher{w: dw, sum: xxhash.New()}
	w, err := ipc.NewFileWriter(fp, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		dw.abort()
		dw.f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("tracefile: create %s: %w", path, err)
	}
	return &CondensedWriter{path: path, tmp: tmp, dw: dw, fp: fp, w: w, mem: mem, schema: schema,
		buf: make([]uint64, 0, CondensedBatchRows)}, nil
}

// Append adds one fingerprint.
func (c *CondensedWriter) Append(fp uint64) error {
	c.buf = append(c.buf, fp)
	if len(c.buf) == cap(c.buf) {
		return c.flush()
	}
	return nil
}

// AppendSlice adds fingerprints in order.
func (c *CondensedWriter) AppendSlice(fps []uint64) error {
	for len(fps) > 0 {
		n := copy(c.buf[len(c.buf):cap(c.buf)], fps)
		c.buf = c.buf[:len(c.buf)+n]
		fps = fps[n:]
		if len(c.buf) == cap(c.buf) {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rows is the number of fingerprints appended so far.
func (c *CondensedWriter) Rows() int64 { return c.rows + int64(len(c.buf)) }

func (c *CondensedWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	data := array.NewData(arrow.PrimitiveTypes.Uint64, len(c.buf),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Uint64Traits.CastToBytes(c.buf))}, nil, 0, 0)
	arr := array.NewUint64Data(data)
	data.Release()
	rec := array.NewRecordBatch(c.schema, []arrow.Array{arr}, int64(len(c.buf)))
	arr.Release()
	err := c.w.Write(rec)
	rec.Release()
	if err != nil {
		return fmt.Errorf("tracefile: write %s: %w", c.path, err)
	}
	c.rows += int64(len(c.buf))
	c.buf = c.buf[:0]
	return nil
}

// Close flushes, writes the file footer and renames the file into place.
func (c *CondensedWriter) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.flush()
	c.fp.capture = true
	if cerr := c.w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("tracefile: close %s: %w", c.path, cerr)
	}
	if err == nil {
		if perr := c.fp.flush(); perr != nil {
			err = fmt.Errorf("tracefile: write %s: %w", c.path, perr)
		}
	}
	if ferr := c.dw.finish(); err == nil && ferr != nil {
		err = fmt.Errorf("tracefile: write %s: %w", c.path, ferr)
	}
	if serr := c.dw.f.Sync(); err == nil && serr != nil {
		err = fmt.Errorf("tracefile: sync %s: %w", c.path, serr)
	}
	if cerr := c.dw.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("tracefile: close %s: %w", c.path, cerr)
	}
	if err != nil {
		os.Remove(c.tmp)
		return err
	}
	if err := os.Rename(c.tmp, c.path); err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	return nil
}

// Abort discards a trace being written.
func (c *CondensedWriter) Abort() {
	if c.closed {
		return
	}
	c.closed = true
	c.w.Close()
	c.dw.abort()
	c.dw.f.Close()
	os.Remove(c.tmp)
}

// CondensedReader reads a condensed trace zero-copy from a memory map. The
// slices it returns point into the map and are valid until Close. It is not
// safe for concurrent use, but several readers may map the same file.
type CondensedReader struct {
	path   string
	data   []byte
	blocks []fileBlock
	// The checksum check of a full pass: the digest of the file's
	// bytes before hashedTo, through the end of blocks[:hashed], read in
	// order ([checkSum] hashes the rest at the end).
	layout   fileLayout
	sum      *xxhash.Digest
	hashed   int
	hashedTo int64
	verified bool
	r        *ipc.FileReader
	meta     Meta
	i        int
	cur      arrow.RecordBatch
	fps      []uint64
	err      error
	total    int64
}

// OpenCondensed maps the condensed trace at path.
func OpenCondensed(path string) (*CondensedReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, InputError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%w: %s: is a directory, not a condensed trace", ErrBadInput, path)
	}
	var data []byte
	if st.Size() > 0 {
		data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return nil, fmt.Errorf("tracefile: mmap %s: %w", path, err)
		}
	}
	cr := &CondensedReader{path: path, data: data}
	var l fileLayout
	cr.r, l, err = openFile(path, data)
	if err != nil {
		cr.unmap()
		return nil, err
	}
	if cr.meta, err = checkSchema(path, cr.r.Schema(), KindCondensed); err != nil {
		cr.Close()
		return nil, err
	}
	if l.sumAt < 0 {
		cr.Close()
		return nil, fmt.Errorf("%w: %s: no checksum in its metadata (written before crawltrace recorded them, or damaged)", ErrCorrupt, path)
	}
	cr.total, cr.blocks, cr.layout, cr.sum = l.rows, l.blocks, l, xxhash.New()
	return cr, nil
}

func checkSchema(path string, s *arrow.Schema, kind string) (Meta, error) {
	m, err := parseMeta(s.Metadata())
	if err != nil {
		return Meta{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Kind != kind {
		return Meta{}, fmt.Errorf("%w: %s: is a %q file, want %q", ErrBadInput, path, m.Kind, kind)
	}
	var want *arrow.Schema
	switch kind {
	case KindCondensed:
		want = CondensedSchema(m)
	case KindURLs:
		want = URLSchema(m)
	case KindPages:
		want = PageSchema(m)
	}
	if !want.Equal(s) {
		return Meta{}, fmt.Errorf("%w: %s: wrong schema for %s file: %s", ErrCorrupt, path, kind, schemaLine(s.String()))
	}
	return m, nil
}

// Meta returns the trace's metadata.
func (c *CondensedReader) Meta() Meta { return c.meta }

// Len is the number of fingerprints in the trace.
func (c *CondensedReader) Len() int64 { return c.total }

// Next advances to the next batch of fingerprints.
func (c *CondensedReader) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.err != nil {
		return false
	}
	if c.i >= c.r.NumRecords() {
		if !c.verified && c.hashed == len(c.blocks) {
			c.verified = true
			if _, err := checkSum(c.path, bytes.NewReader(c.data), c.layout, c.hashedTo, c.sum); err != nil {
				c.err = err
			}
		}
		return false
	}
	var rec arrow.RecordBatch
	err := guard(c.path, func() (err error) {
		rec, err = c.r.RecordBatchAt(c.i)
		return err
	})
	if err == nil {
		c.cur = rec
		err = validateBatch(rec)
	}
	if err != nil {
		c.err = fmt.Errorf("%w: %s: batch %d: %v", ErrCorrupt, c.path, c.i, err)
		return false
	}
	if c.i == c.hashed {
		b := c.blocks[c.i]
		if end := b.offset + b.meta + b.body; end > c.hashedTo {
			c.sum.Write(c.data[c.hashedTo:end])
			c.hashedTo = end
		}
		c.hashed++
	}
	c.i++
	col := rec.Column(0).(*array.Uint64)
	if col.NullN() > 0 {
		c.err = fmt.Errorf("%w: %s: null fingerprint in batch %d", ErrCorrupt, c.path, c.i-1)
		return false
	}
	c.fps = col.Uint64Values()
	return true
}

// FPs returns the current batch; valid until Close.
func (c *CondensedReader) FPs() []uint64 { return c.fps }

// Err returns the first error met by Next.
func (c *CondensedReader) Err() error { return c.err }

// Reset rewinds the reader to the first batch (for multi-pass algorithms).
func (c *CondensedReader) Reset() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	c.i, c.err, c.fps = 0, nil, nil
}

// Close unmaps the file.
func (c *CondensedReader) Close() error {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.r != nil {
		c.r.Close()
		c.r = nil
	}
	c.unmap()
	return nil
}

func (c *CondensedReader) unmap() {
	if c.data != nil {
		syscall.Munmap(c.data)
		c.data = nil
	}
}

// ReadCondensedAll reads a whole condensed trace into memory. Use it only
// where an algorithm needs random access (e.g. MIN's next-use pass on
// bounded traces); streaming consumers should use [CondensedReader].
func ReadCondensedAll(path string) ([]uint64, Meta, error) {
	r, err := OpenCondensed(path)
	if err != nil {
		return nil, Meta{}, err
	}
	defer r.Close()
	out := make([]uint64, 0, r.Len())
	for r.Next() {
		out = append(out, r.FPs()...)
	}
	return out, r.Meta(), r.Err()
}

// WriteCondensed writes fps to path as a condensed trace.
func WriteCondensed(path string, m Meta, fps []uint64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	w, err := CreateCondensed(path, m)
	if err != nil {
		return err
	}
	if err := w.AppendSlice(fps); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
