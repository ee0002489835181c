package replay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// maxTextLine bounds one line of a text trace.
const maxTextLine = 1 << 20

// textSource reads one key per line; see [FormatText].
type textSource struct {
	path string
	f    *os.File
	sc   *bufio.Scanner
	line int64
	buf  []uint64
	err  error
}

func openText(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", tracefile.InputError(err))
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%w: replay: %s: is a directory, not a text trace", tracefile.ErrBadInput, path)
	}
	t := &textSource{path: path, f: f, buf: make([]uint64, 0, batchSize)}
	t.reset()
	return t, nil
}

func (t *textSource) reset() {
	t.sc = bufio.NewScanner(t.f)
	t.sc.Buffer(make([]byte, 64<<10), maxTextLine)
	t.line, t.err, t.buf = 0, nil, t.buf[:0]
}

// ParseTextKey converts one line of a text trace to a key (see
// [FormatText]). ok is false for an empty line.
func ParseTextKey(line []byte) (key uint64, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return 0, false, nil
	}
	if allDigits(line) {
		v, err := strconv.ParseUint(string(line), 10, 64)
		if err != nil {
			return 0, false, errors.New("decimal key overflows uint64")
		}
		return v, true, nil
	}
	if len(line) > 2 && len(line) <= 18 && line[0] == '0' && (line[1] == 'x' || line[1] == 'X') && allHex(line[2:]) {
		v, _ := strconv.ParseUint(string(line[2:]), 16, 64)
		return v, true, nil
	}
	for _, c := range line {
		if c < 0x20 || c == 0x7f {
			return 0, false, fmt.Errorf("control byte 0x%02x", c)
		}
	}
	if !utf8.Valid(line) {
		return 0, false, errors.New("invalid UTF-8")
	}
	return xxhash.Sum64(line), true, nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (t *textSource) Next() bool {
	t.buf = t.buf[:0]
	if t.err != nil {
		return false
	}
	for len(t.buf) < cap(t.buf) && t.sc.Scan() {
		t.line++
		k, ok, err := ParseTextKey(t.sc.Bytes())
		if err != nil {
			t.err = corruptf("%s: line %d: %v", t.path, t.line, err)
			return false
		}
		if ok {
			t.buf = append(t.buf, k)
		}
	}
	if err := t.sc.Err(); err != nil && t.err == nil {
		if errors.Is(err, bufio.ErrTooLong) {
			t.err = corruptf("%s: line %d: longer than %d bytes", t.path, t.line+1, maxTextLine)
		} else {
			t.err = fmt.Errorf("replay: read %s: %w", t.path, err)
		}
		return false
	}
	return len(t.buf) > 0
}

func (t *textSource) Keys() []uint64 { return t.buf }
func (t *textSource) Err() error     { return t.err }
func (t *textSource) Len() int64     { return -1 }
func (t *textSource) Close() error   { return t.f.Close() }

func (t *textSource) Reset() error {
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("replay: %s: %w", t.path, err)
	}
	t.reset()
	return nil
}

var _ Source = (*textSource)(nil)
