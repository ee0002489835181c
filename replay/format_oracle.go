package replay

import (
	"bufio"
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
	path string
	f    *os.File
	br   *bufio.Reader
	size int64
	off  int64
	buf  []uint64
	rec  [OracleRecordSize]byte
	err  error
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
	return &oracleSource{path: path, f: f, br: bufio.NewReaderSize(f, 1<<20), size: st.Size(), buf: make([]uint64, 0, batchSize)}, nil
}

func (o *oracleSource) Next() bool {
	o.buf = o.buf[:0]
	if o.err != nil {
		return false
	}
	for len(o.buf) < cap(o.buf) && o.off < o.size {
		if _, err := io.ReadFull(o.br, o.rec[:]); err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				o.err = corruptf("%s: truncated oracleGeneral record at offset %d", o.path, o.off)
			} else {
				o.err = fmt.Errorf("replay: read %s: %w", o.path, err)
			}
			break
		}
		if next := int64(binary.LittleEndian.Uint64(o.rec[16:])); next < -1 {
			o.err = corruptf("%s: bad next-request position %d in record at offset %d", o.path, next, o.off)
			break
		}
		o.buf = append(o.buf, binary.LittleEndian.Uint64(o.rec[4:12]))
		o.off += OracleRecordSize
	}
	return len(o.buf) > 0 && o.err == nil
}

func (o *oracleSource) Keys() []uint64 { return o.buf }
func (o *oracleSource) Err() error     { return o.err }
func (o *oracleSource) Len() int64     { return o.size / OracleRecordSize }
func (o *oracleSource) Close() error   { return o.f.Close() }

func (o *oracleSource) Reset() error {
	if _, err := o.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("replay: %s: %w", o.path, err)
	}
	o.br.Reset(o.f)
	o.off, o.err, o.buf = 0, nil, o.buf[:0]
	return nil
}

var _ Source = (*oracleSource)(nil)
