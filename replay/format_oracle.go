package replay

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// OracleRecordSize is the size of one oracleGeneral request record.
const OracleRecordSize = 24

// oracleSource decodes libCacheSim's oracleGeneral format: per request,
// little-endian uint32 time, uint64 id, uint32 size, int64 next position.
// The file size must be a multiple of 24; anything else is reported as a
// truncated file at the offset of the partial record.
type oracleSource struct {
	path  string
	f     *os.File
	size  int64
	off   int64
	buf   []uint64
	chunk []byte // the records of one batch, read in one call
	err   error
}

func openOracle(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", tracefile.InputError(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("replay: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%w: replay: %s: is a directory, not an oracleGeneral trace", tracefile.ErrBadInput, path)
	}
	if rem := st.Size() % OracleRecordSize; rem != 0 {
		f.Close()
		return nil, corruptf("%s: truncated oracleGeneral trace: %d bytes is not a multiple of %d (partial record at offset %d)",
			path, st.Size(), OracleRecordSize, st.Size()-rem)
	}
	n := min(int64(batchSize), st.Size()/OracleRecordSize)
	return &oracleSource{path: path, f: f, size: st.Size(), buf: make([]uint64, 0, batchSize), chunk: make([]byte, n*OracleRecordSize)}, nil
}

// Next reads the next batch of records in one read and decodes them.
func (o *oracleSource) Next() bool {
	o.buf = o.buf[:0]
	if o.err != nil || o.off >= o.size {
		return false
	}
	b := o.chunk[:min(int64(len(o.chunk)), o.size-o.off)]
	if got, err := io.ReadFull(o.f, b); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			o.err = corruptf("%s: truncated oracleGeneral record at offset %d", o.path, o.off+int64(got/OracleRecordSize*OracleRecordSize))
		} else {
			o.err = fmt.Errorf("replay: read %s: %w", o.path, err)
		}
		return false
	}
	for i := 0; i+OracleRecordSize <= len(b); i += OracleRecordSize {
		r := b[i : i+OracleRecordSize]
		if next := int64(binary.LittleEndian.Uint64(r[16:])); next < -1 {
			o.err = corruptf("%s: bad next-request position %d in record at offset %d", o.path, next, o.off+int64(i))
			return false
		}
		o.buf = append(o.buf, binary.LittleEndian.Uint64(r[4:12]))
	}
	o.off += int64(len(b))
	return true
}

func (o *oracleSource) Keys() []uint64 { return o.buf }
func (o *oracleSource) Err() error     { return o.err }
func (o *oracleSource) Len() int64     { return o.size / OracleRecordSize }
func (o *oracleSource) Close() error   { return o.f.Close() }

func (o *oracleSource) Reset() error {
	if _, err := o.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("replay: %s: %w", o.path, err)
	}
	o.off, o.err, o.buf = 0, nil, o.buf[:0]
	return nil
}

var _ Source = (*oracleSource)(nil)
