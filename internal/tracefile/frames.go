package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Arrow's Go IPC reader trusts the lengths written in a stream: a corrupt
// vector length or body length makes it allocate without bound, which is a
// fatal out-of-memory error, not a recoverable panic. Before handing a
// segment to it, scanFrames walks the stream's message framing and checks
// every length it will trust against the bytes actually there, and the
// reader then only sees the valid prefix.

// maxMetaLen bounds one message's metadata (our schema messages are ~2 KiB).
const maxMetaLen = 1 << 20

// Message header union types (Message.fbs).
const (
	hdrSchema          = 1
	hdrDictionaryBatch = 2
	hdrRecordBatch     = 3
)

type frameScan struct {
	truncated  bool  // stopped because the file ends inside a message
	validEnd   int64 // end of the last complete, plausible message
	messages   int   // complete messages (schema included)
	eos        bool  // the end-of-stream marker follows validEnd
	stop       string
	schemaEnd  int64 // end of the schema message (the first)
	compressed bool  // some record batch has body compression
	// batches are the complete record batch messages, in order: where
	// each starts and its row count.
	batches []batchFrame
}

type batchFrame struct{ off, rows int64 }

func scanFrames(r io.ReaderAt, size int64) frameScan {
	var s frameScan
	var hdr [8]byte
	off := int64(0)
	for {
		if off+8 > size {
			if off < size {
				s.stop = "truncated message header"
				s.truncated = true
			}
			return s
		}
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			s.stop = err.Error()
			return s
		}
		if binary.LittleEndian.Uint32(hdr[:4]) != 0xffffffff {
			s.stop = fmt.Sprintf("no continuation marker at offset %d", off)
			return s
		}
		metaLen := int64(int32(binary.LittleEndian.Uint32(hdr[4:])))
		if metaLen == 0 {
			s.eos = true
			return s
		}
		if metaLen < 0 || metaLen > maxMetaLen {
			s.stop = fmt.Sprintf("message at offset %d has a bad length", off)
			return s
		}
		if off+8+metaLen > size {
			s.stop = fmt.Sprintf("message at offset %d is cut", off)
			s.truncated = true
			return s
		}
		meta := make([]byte, metaLen)
		if _, err := r.ReadAt(meta, off+8); err != nil {
			s.stop = err.Error()
			return s
		}
		body, rows, bufs, err := checkMessage(meta, s.messages == 0)
		if err == nil {
			err = checkCompressed(r, off+8+metaLen, body, bufs)
		}
		if err != nil {
			s.stop = fmt.Sprintf("message at offset %d: %v", off, err)
			return s
		}
		end := off + 8 + metaLen + body
		if end > size {
			s.stop = fmt.Sprintf("message at offset %d is cut", off)
			s.truncated = true
			return s
		}
		if s.messages == 0 {
			s.schemaEnd = end
		} else {
			s.batches = append(s.batches, batchFrame{off: off, rows: rows})
		}
		if bufs != nil {
			s.compressed = true
		}
		off = end
		s.validEnd = end
		s.messages++
	}
}

// checkMessage checks the lengths of one Message flatbuffer of a stream
// (the first must be the schema) and returns its body length, a record
// batch's row count and, for a compressed record batch, its buffers
// (offset, length in the body).
func checkMessage(b []byte, first bool) (body, rows int64, compressed [][2]int64, err error) {
	m, err := parseMessage(b)
	if err != nil {
		return 0, 0, nil, err
	}
	switch {
	case first && m.typ != hdrSchema:
		return 0, 0, nil, errors.New("stream does not start with a schema")
	case m.typ == hdrSchema && !first:
		return 0, 0, nil, errors.New("second schema in stream")
	}
	if m.compressed {
		compressed = m.bufs
		if compressed == nil {
			compressed = [][2]int64{} // non-nil: the batch is compressed
		}
	}
	return m.body, m.rows, compressed, nil
}

// message is what parseMessage learned from a Message flatbuffer.
type message struct {
	typ        byte
	body       int64      // body length
	rows       int64      // record batch: rows
	bufs       [][2]int64 // record batch: buffers (offset, length in the body)
	compressed bool       // record batch: body compression
}

// parseMessage checks a Message flatbuffer (Message.fbs) as far as
// arrow-go will read it: every table, vector and string is inside b, a
// record batch's buffers lie inside its body and its counts are sane.
// Dictionary batches are refused: crawltrace writes none.
func parseMessage(b []byte) (message, error) {
	var m message
	f := fbuf{b}
	msg, err := f.root()
	if err != nil {
		return m, err
	}
	typ, err := f.scalar(msg, 6, 1)
	if err != nil {
		return m, err
	}
	m.typ = byte(typ)
	body, err := f.scalar(msg, 10, 8)
	if err != nil {
		return m, err
	}
	m.body = int64(body)
	if m.body < 0 {
		return m, fmt.Errorf("negative body length %d", m.body)
	}
	if err := f.checkKeyValues(msg, 12); err != nil {
		return m, err
	}
	h, ok, err := f.sub(msg, 8)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, errors.New("message without header")
	}
	switch m.typ {
	case hdrSchema:
		if err := f.checkSchema(h); err != nil {
			return m, err
		}
	case hdrRecordBatch:
		rows, err := f.scalar(h, 4, 8)
		if err != nil {
			return m, err
		}
		m.rows = int64(rows)
		if m.rows < 0 || m.rows > m.body*1024+1024 {
			return m, fmt.Errorf("implausible row count %d for a %d-byte body", m.rows, m.body)
		}
		start, l, err := f.vector(h, 6, 16) // nodes: FieldNode{length, null_count}
		if err != nil {
			return m, err
		}
		for i := range l {
			p := start + 16*i
			n, nulls := int64(binary.LittleEndian.Uint64(b[p:])), int64(binary.LittleEndian.Uint64(b[p+8:]))
			if n < 0 || nulls < 0 || nulls > n {
				return m, fmt.Errorf("field node %d: length %d, %d nulls", i, n, nulls)
			}
		}
		start, l, err = f.vector(h, 8, 16) // buffers: Buffer{offset, length}
		if err != nil {
			return m, err
		}
		for i := range l {
			p := start + 16*i
			off, n := int64(binary.LittleEndian.Uint64(b[p:])), int64(binary.LittleEndian.Uint64(b[p+8:]))
			if off < 0 || n < 0 || off > m.body || n > m.body-off {
				return m, fmt.Errorf("buffer %d (%d bytes at %d) outside the %d-byte body", i, n, off, m.body)
			}
			m.bufs = append(m.bufs, [2]int64{off, n})
		}
		if c, ok, err := f.sub(h, 10); err != nil {
			return m, err
		} else if ok {
			if _, err := f.scalar(c, 4, 1); err != nil {
				return m, err
			}
			m.compressed = true
		}
		if _, _, err := f.vector(h, 12, 8); err != nil { // variadicBufferCounts
			return m, err
		}
	case hdrDictionaryBatch:
		return m, errors.New("unexpected dictionary batch")
	default:
		return m, fmt.Errorf("unexpected message type %d", m.typ)
	}
	return m, nil
}

// checkCompressed bounds the uncompressed length that prefixes each
// compressed buffer of a record batch body starting at bodyOff.
func checkCompressed(r io.ReaderAt, bodyOff, body int64, bufs [][2]int64) error {
	var b [8]byte
	for _, buf := range bufs {
		off, l := buf[0], buf[1]
		if l == 0 {
			continue
		}
		if off < 0 || l < 8 || off+l > body {
			return errors.New("compressed buffer out of range")
		}
		if _, err := r.ReadAt(b[:], bodyOff+off); err != nil {
			return err
		}
		if u := int64(binary.LittleEndian.Uint64(b[:])); u > 1024*l+1<<20 {
			return fmt.Errorf("implausible uncompressed length %d", u)
		}
	}
	return nil
}
