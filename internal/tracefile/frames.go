package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	flatbuffers "github.com/google/flatbuffers/go"
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

// checkMessage checks the lengths of one Message flatbuffer and returns its
// body length and, for a record batch, its row count. Out-of-range reads
// panic inside the flatbuffers accessors and are turned into errors.
func checkMessage(b []byte, first bool) (body, rows int64, compressed [][2]int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed metadata (%v)", p)
		}
	}()
	n := len(b)
	if n < 8 {
		return 0, 0, nil, errors.New("metadata too short")
	}
	root := flatbuffers.GetUOffsetT(b)
	if int(root) >= n {
		return 0, 0, nil, errors.New("bad root offset")
	}
	msg := &flatbuffers.Table{Bytes: b, Pos: root}
	checkVtable(msg, n)
	hdrType := msg.GetUint8Slot(6, 0)
	body = int64(msg.GetUint64Slot(10, 0))
	if o := msg.Offset(12); o != 0 {
		checkVec(msg, o, n, 4)
	}
	o := msg.Offset(8)
	if o == 0 {
		return 0, 0, nil, errors.New("message without header")
	}
	var h flatbuffers.Table
	msg.Union(&h, flatbuffers.UOffsetT(o))
	checkVtable(&h, n)
	switch {
	case first && hdrType != hdrSchema:
		return 0, 0, nil, errors.New("stream does not start with a schema")
	case hdrType == hdrSchema:
		if !first {
			return 0, 0, nil, errors.New("second schema in stream")
		}
		if o := h.Offset(6); o != 0 {
			checkFields(&h, o, n, 0)
		}
		if o := h.Offset(8); o != 0 {
			checkVec(&h, o, n, 4)
		}
		if o := h.Offset(10); o != 0 {
			checkVec(&h, o, n, 8)
		}
	case hdrType == hdrRecordBatch:
		if o := h.Offset(6); o != 0 {
			checkVec(&h, o, n, 16)
		}
		if o := h.Offset(8); o != 0 {
			checkVec(&h, o, n, 16)
		}
		if o := h.Offset(12); o != 0 {
			checkVec(&h, o, n, 8)
		}
		if h.Offset(10) != 0 {
			compressed = [][2]int64{} // non-nil: the batch is compressed
			if o := h.Offset(8); o != 0 {
				l := checkVec(&h, o, n, 16)
				vec := h.Vector(flatbuffers.UOffsetT(o))
				for i := 0; i < l; i++ {
					p := int(vec) + 16*i
					compressed = append(compressed, [2]int64{int64(binary.LittleEndian.Uint64(b[p:])), int64(binary.LittleEndian.Uint64(b[p+8:]))})
				}
			}
		}
		if rows = int64(h.GetUint64Slot(4, 0)); rows < 0 || rows > body*1024+1024 {
			return 0, 0, nil, fmt.Errorf("implausible row count %d for a %d-byte body", rows, body)
		}
	case hdrType == hdrDictionaryBatch:
		return 0, 0, nil, errors.New("unexpected dictionary batch")
	default:
		return 0, 0, nil, fmt.Errorf("unexpected message type %d", hdrType)
	}
	return body, rows, compressed, nil
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

func checkVtable(t *flatbuffers.Table, n int) {
	vt := int(t.Pos) - int(t.GetSOffsetT(t.Pos))
	if vt < 0 || vt+4 > n {
		panic("bad vtable")
	}
	if l := int(t.GetVOffsetT(flatbuffers.UOffsetT(vt))); vt+l > n {
		panic("bad vtable length")
	}
}

// checkVec checks that the vector at field offset o fits in n bytes with
// elements of elem bytes.
func checkVec(t *flatbuffers.Table, o flatbuffers.VOffsetT, n, elem int) int {
	start := int(t.Pos) + int(o)
	if start+4 > n {
		panic("vector offset out of range")
	}
	vec := start + int(flatbuffers.GetUOffsetT(t.Bytes[start:]))
	if vec+4 > n {
		panic("vector out of range")
	}
	l := int(flatbuffers.GetUOffsetT(t.Bytes[vec:]))
	if l < 0 || vec+4+l*elem > n {
		panic("vector length out of range")
	}
	return l
}

// checkFields checks a [Field] vector recursively (children, metadata).
func checkFields(t *flatbuffers.Table, o flatbuffers.VOffsetT, n, depth int) {
	if depth > 32 {
		panic("fields nested too deep")
	}
	l := checkVec(t, o, n, 4)
	vec := t.Vector(flatbuffers.UOffsetT(o))
	for i := 0; i < l; i++ {
		var f flatbuffers.Table
		f.Bytes = t.Bytes
		f.Pos = t.Indirect(vec + flatbuffers.UOffsetT(i*4))
		if int(f.Pos)+4 > n {
			panic("field out of range")
		}
		checkVtable(&f, n)
		if o := f.Offset(4); o != 0 {
			checkVec(&f, o, n, 1)
		}
		if o := f.Offset(14); o != 0 {
			checkFields(&f, o, n, depth+1)
		}
		if o := f.Offset(16); o != 0 {
			checkVec(&f, o, n, 4)
		}
	}
}
