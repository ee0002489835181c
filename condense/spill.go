package condense

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// spillWriter appends records to one partition's spill file.
type spillWriter struct {
	f    *os.File
	w    *bufio.Writer
	path string
}

func newSpillWriter(path string, bufSize int) (*spillWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("condense: spill: %w", err)
	}
	return &spillWriter{f: f, w: bufio.NewWriterSize(f, bufSize), path: path}, nil
}

// write appends one spill record: fp uint64, node uint16, uvarint length,
// URL bytes.
func (s *spillWriter) write(head []byte, u string) error {
	// Header and length go straight into the writer's buffer (a local
	// array passed to Write would escape: one allocation per record).
	b := binary.AppendUvarint(append(s.w.AvailableBuffer(), head...), uint64(len(u)))
	s.w.Write(b)
	if _, err := s.w.WriteString(u); err != nil {
		return fmt.Errorf("condense: spill %s: %w", s.path, err)
	}
	return nil
}

func (s *spillWriter) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	if err != nil {
		return fmt.Errorf("condense: spill %s: %w", s.path, err)
	}
	return nil
}

func decodeRec(b []byte, off int) (fp uint64, node uint16, u []byte, next int, err error) {
	if off+10 > len(b) {
		return 0, 0, nil, 0, errors.New("truncated record")
	}
	fp = binary.LittleEndian.Uint64(b[off:])
	node = binary.LittleEndian.Uint16(b[off+8:])
	n, k := binary.Uvarint(b[off+10:])
	if k <= 0 || off+10+k+int(n) > len(b) {
		return 0, 0, nil, 0, errors.New("truncated record")
	}
	start := off + 10 + k
	return fp, node, b[start : start+int(n)], start + int(n), nil
}
