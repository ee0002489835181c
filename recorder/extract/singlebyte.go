package extract

import (
	"io"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// singleByteReader decodes a single-byte encoding whose lower half is
// ASCII (windows-1252, ISO-8859-x, KOI8-R, ...) to UTF-8: runs of ASCII
// are copied as they are and other bytes looked up in the code table. It
// does what x/text's decoder for the Charmap does, without the
// transformer's two buffers and per-call overhead, so that a page in such
// an encoding, or an unlabeled ASCII page (read as windows-1252), costs
// about what a UTF-8 page costs. Its buffer is reused across pages.
type singleByteReader struct {
	r   io.Reader
	cm  *charmap.Charmap
	buf [4096]byte
	raw []byte // bytes read from r and not yet decoded, in buf
	err error  // r's error, returned once raw is empty
	// A character cut by the end of a short p: its remaining bytes.
	pend    []byte
	pendBuf [utf8.UTFMax]byte
	// high is set once a byte outside ASCII was decoded.
	high bool
}

// asciiCompatible reports whether cm maps 0x00-0x7F to ASCII.
func asciiCompatible(cm *charmap.Charmap) bool {
	for b := range utf8.RuneSelf {
		if cm.DecodeByte(byte(b)) != rune(b) {
			return false
		}
	}
	return true
}

func (s *singleByteReader) reset(r io.Reader, cm *charmap.Charmap) {
	s.r, s.cm, s.raw, s.err, s.pend, s.high = r, cm, nil, nil, nil, false
}

func (s *singleByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(s.pend) > 0 {
		k := copy(p, s.pend)
		s.pend = s.pend[k:]
		return k, nil
	}
	if len(s.raw) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		var n int
		n, s.err = s.r.Read(s.buf[:])
		s.raw = s.buf[:n]
		if n == 0 {
			return 0, s.err
		}
	}
	n := 0
	for len(s.raw) > 0 {
		i := 0
		for i < len(s.raw) && s.raw[i] < utf8.RuneSelf {
			i++
		}
		k := copy(p[n:], s.raw[:i])
		n += k
		s.raw = s.raw[k:]
		if k < i || len(s.raw) == 0 {
			break
		}
		s.high = true
		r := s.cm.DecodeByte(s.raw[0])
		if utf8.RuneLen(r) > len(p)-n {
			if n == 0 { // p is shorter than the character
				m := utf8.EncodeRune(s.pendBuf[:], r)
				n = copy(p, s.pendBuf[:m])
				s.pend = s.pendBuf[n:m]
				s.raw = s.raw[1:]
			}
			break
		}
		n += utf8.EncodeRune(p[n:], r)
		s.raw = s.raw[1:]
	}
	return n, nil
}

// highByteReader passes a page through and notes whether it held a byte
// outside ASCII: for an ASCII-compatible encoding read through x/text
// (Shift_JIS, EUC-KR, GBK...), a page without one reads as it would in
// UTF-8.
type highByteReader struct {
	r    io.Reader
	high bool
}

func (h *highByteReader) reset(r io.Reader) { h.r, h.high = r, false }

func (h *highByteReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if !h.high {
		for _, c := range p[:n] {
			if c >= utf8.RuneSelf {
				h.high = true
				break
			}
		}
	}
	return n, err
}

// asciiCompatibleName reports whether the WHATWG encoding name reads
// every ASCII byte as that character, wherever it stands: all but
// UTF-16, ISO-2022-JP (whose escapes are ASCII) and replacement.
func asciiCompatibleName(name string) bool {
	switch name {
	case "utf-16be", "utf-16le", "iso-2022-jp", "replacement":
		return false
	}
	return true
}
