package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// An Arrow IPC file (condensed traces, results tables) is
//
//	"ARROW1" 2 bytes padding
//	schema message, record batch messages, end-of-stream marker
//	footer flatbuffer (File.fbs: version, schema, dictionary and
//	    record batch blocks {offset int64, metaDataLength int32, bodyLength int64})
//	footer length int32, "ARROW1"
//
// arrow-go reads only the footer's schema and the blocks it lists. checkFile
// checks all of that before arrow-go is given the file: the magic at both
// ends, the footer flatbuffer and its schema, and each block's place in the
// file, its message and the message's buffers. What it does not check is
// whether the buffers are long enough for the columns' types; readers check
// that on each batch ([validateBatch]).

const ipcMagic = "ARROW1"

// fileBlock is one record batch of an Arrow IPC file: where its message
// starts, its metadata (prefix included) and body lengths, and its rows.
type fileBlock struct {
	offset int64
	meta   int64
	body   int64
	rows   int64
}

// fileLayout is what checkFile learned about a file.
type fileLayout struct {
	blocks []fileBlock
	rows   int64
	size   int64
	// sumAt and sumLen locate the value of the footer schema's
	// crawltrace.checksum in the file (sumAt -1: none).
	sumAt, sumLen int64
}

// checkFile checks the structure of the Arrow IPC file of size bytes read
// through r. Its errors do not name the file; callers wrap them.
func checkFile(r io.ReaderAt, size int64) (fileLayout, error) {
	var l fileLayout
	const tail = int64(4 + len(ipcMagic))
	if size < 8+tail+8 {
		return l, fmt.Errorf("%d bytes, too short for an Arrow file", size)
	}
	head := make([]byte, 8)
	if _, err := r.ReadAt(head, 0); err != nil {
		return l, err
	}
	end := make([]byte, tail)
	if _, err := r.ReadAt(end, size-tail); err != nil {
		return l, err
	}
	if string(head[:len(ipcMagic)]) != ipcMagic || string(end[4:]) != ipcMagic {
		return l, errors.New("no Arrow file magic (ARROW1) at its start and end")
	}
	footerLen := int64(int32(binary.LittleEndian.Uint32(end)))
	if footerLen <= 0 || footerLen > size-8-tail {
		return l, fmt.Errorf("footer length %d does not fit in a %d-byte file", footerLen, size)
	}
	dataEnd := size - tail - footerLen
	footer := make([]byte, footerLen)
	if _, err := r.ReadAt(footer, dataEnd); err != nil {
		return l, err
	}
	f := fbuf{footer}
	root, err := f.root()
	if err == nil {
		err = checkFooter(f, root)
	}
	if err != nil {
		return l, fmt.Errorf("footer: %w", err)
	}
	l.size, l.sumAt = size, -1
	if p, n, err := f.metaValueAt(root, metaPrefix+"checksum"); err != nil {
		return l, fmt.Errorf("footer: %w", err)
	} else if p >= 0 {
		l.sumAt, l.sumLen = dataEnd+int64(p), int64(n)
	}
	start, n, _ := f.vector(root, 10, 24)
	var hdr [8]byte
	for i := range n {
		p := start + 24*i
		b := fileBlock{
			offset: int64(binary.LittleEndian.Uint64(footer[p:])),
			meta:   int64(int32(binary.LittleEndian.Uint32(footer[p+8:]))),
			body:   int64(binary.LittleEndian.Uint64(footer[p+16:])),
		}
		if b.offset < 8 || b.offset%8 != 0 || b.meta < 8 || b.meta > maxMetaLen || b.meta%8 != 0 ||
			b.body < 0 || b.body%8 != 0 || b.offset > dataEnd || b.meta+b.body > dataEnd-b.offset {
			return l, fmt.Errorf("record batch %d: block (offset %d, metadata %d, body %d bytes) outside the %d bytes before the footer",
				i, b.offset, b.meta, b.body, dataEnd)
		}
		if _, err := r.ReadAt(hdr[:], b.offset); err != nil {
			return l, err
		}
		if binary.LittleEndian.Uint32(hdr[:]) != 0xffffffff || int64(int32(binary.LittleEndian.Uint32(hdr[4:]))) != b.meta-8 {
			return l, fmt.Errorf("record batch %d: no message of %d bytes at offset %d", i, b.meta-8, b.offset)
		}
		meta := make([]byte, b.meta-8)
		if _, err := r.ReadAt(meta, b.offset+8); err != nil {
			return l, err
		}
		m, err := parseMessage(meta)
		if err != nil {
			return l, fmt.Errorf("record batch %d: %w", i, err)
		}
		switch {
		case m.typ != hdrRecordBatch:
			return l, fmt.Errorf("record batch %d: message of type %d", i, m.typ)
		case m.body != b.body:
			return l, fmt.Errorf("record batch %d: body of %d bytes, footer says %d", i, m.body, b.body)
		case m.compressed:
			return l, fmt.Errorf("record batch %d: compressed (crawltrace writes files uncompressed)", i)
		}
		b.rows = m.rows
		l.rows += m.rows
		l.blocks = append(l.blocks, b)
	}
	return l, nil
}

// checkFooter checks a Footer table: its schema, no dictionaries, the
// record batch block vector, its metadata.
func checkFooter(f fbuf, root fbTable) error {
	s, ok, err := f.sub(root, 6)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("no schema")
	}
	if err := f.checkSchema(s); err != nil {
		return err
	}
	if _, n, err := f.vector(root, 8, 24); err != nil {
		return err
	} else if n != 0 {
		return fmt.Errorf("%d dictionary batches (crawltrace writes none)", n)
	}
	if _, _, err := f.vector(root, 10, 24); err != nil {
		return err
	}
	return f.checkKeyValues(root, 12)
}

// openFile checks the Arrow IPC file data (the whole file, e.g. mapped)
// and opens it with arrow-go's reader, which then only reads what was
// checked. Errors wrap ErrCorrupt and name path.
func openFile(path string, data []byte) (*ipc.FileReader, fileLayout, error) {
	l, err := checkFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, l, fmt.Errorf("%w: %s: not an Arrow file: %v", ErrCorrupt, path, err)
	}
	var r *ipc.FileReader
	err = guard(path, func() (err error) {
		r, err = ipc.NewMappedFileReader(data)
		return err
	})
	if err != nil {
		return nil, l, fmt.Errorf("%w: %s: not an Arrow file (%v)", ErrCorrupt, path, err)
	}
	return r, l, nil
}

// guard runs fn, a call into arrow-go on a file checkFile passed, and
// turns a panic in it into an error naming path. It is the last line of
// defense: checkFile is meant to leave arrow-go nothing to panic on.
func guard(path string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: malformed Arrow data (%v)", ErrCorrupt, path, p)
		}
	}()
	return fn()
}
