package extract

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// prescanLen is how many bytes of a page are looked at for a <meta>
// charset declaration and for sniffing, as in the HTML standard's
// encoding sniffing algorithm.
const prescanLen = 1024

// pageEncoding is the encoding a page is decoded with.
type pageEncoding struct {
	name    string            // WHATWG name: "utf-8", "windows-1252", "shift_jis", ...
	enc     encoding.Encoding // nil for UTF-8: the page is tokenized as it is
	bom     int               // bytes of byte order mark to skip
	unknown bool              // a declared label was not recognized: read as windows-1252
}

var (
	utf8Encoding   = pageEncoding{name: "utf-8"}
	windows1252Enc = pageEncoding{name: "windows-1252", enc: charmap.Windows1252}
)

// lookupLabel returns the encoding of a WHATWG encoding label ("latin1",
// "Shift_JIS", " utf8 "); ok is false for a label the Encoding Standard
// does not list.
func lookupLabel(label string) (pageEncoding, bool) {
	label = strings.TrimSpace(label)
	if label == "" || strings.EqualFold(label, "replacement") {
		// "replacement" names an encoding but is not one of its labels.
		return pageEncoding{}, false
	}
	e, err := htmlindex.Get(label)
	if err != nil {
		return pageEncoding{}, false
	}
	name, err := htmlindex.Name(e)
	if err != nil {
		return pageEncoding{}, false
	}
	if name == "utf-8" {
		return utf8Encoding, true
	}
	return pageEncoding{name: name, enc: e}, true
}

// sniffEncoding decides a page's encoding from the first bytes of its body
// (head, at most prescanLen are looked at) and its Content-Type header,
// following the HTML standard's encoding sniffing algorithm as
// golang.org/x/net/html/charset.DetermineEncoding does: a byte order
// mark; else the header's charset; else a <meta charset> or <meta
// http-equiv=content-type> in the first 1024 bytes; else UTF-8 if those
// bytes hold valid non-ASCII UTF-8, windows-1252 if not. A declared label
// that is not an encoding is passed over, as in a browser; when no
// declaration is recognized and one was not, the page is read as
// windows-1252 (a browser's default in most locales) and unknown is set.
func sniffEncoding(head []byte, contentType string) pageEncoding {
	if len(head) > prescanLen {
		head = head[:prescanLen]
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xef, 0xbb, 0xbf}):
		pe := utf8Encoding
		pe.bom = 3
		return pe
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		pe, _ := lookupLabel("utf-16be")
		pe.bom = 2
		return pe
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		pe, _ := lookupLabel("utf-16le")
		pe.bom = 2
		return pe
	}
	unknown := false
	if label, ok := contentTypeCharset(contentType); ok {
		if pe, ok := lookupLabel(label); ok {
			return pe
		}
		unknown = strings.TrimSpace(label) != "" // "charset=" declares nothing
	}
	pe, ok, badMeta := prescanMeta(head)
	if ok {
		return pe
	}
	if unknown || badMeta {
		pe := windows1252Enc
		pe.unknown = true
		return pe
	}
	// Sniff: valid UTF-8 with a non-ASCII byte is UTF-8. A rune cut at
	// the end does not count against it.
	for i := len(head) - 1; i >= 0 && i > len(head)-utf8.UTFMax; i-- {
		if head[i] < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(head[i]) {
			head = head[:i]
			break
		}
	}
	for _, c := range head {
		if c >= utf8.RuneSelf {
			if utf8.Valid(head) {
				return utf8Encoding
			}
			break
		}
	}
	return windows1252Enc
}

// contentTypeCharset returns the charset parameter of a Content-Type
// value. It is lenient, as browsers are: a malformed parameter elsewhere
// does not hide it.
func contentTypeCharset(ct string) (string, bool) {
	i := strings.IndexByte(ct, ';')
	if i < 0 {
		return "", false
	}
	for p := range strings.SplitSeq(ct[i+1:], ";") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "charset") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		return v, true
	}
	return "", false
}

// prescanMeta looks for the first <meta> in head that declares a known
// encoding, as the HTML standard's prescan does (on the tokenizer, like
// x/net/html/charset): <meta charset=X>, or <meta http-equiv=content-type
// content="...; charset=X">, the first of duplicate attributes winning. A
// declared UTF-16 means UTF-8 and x-user-defined means windows-1252. bad
// reports a declaration whose label is not an encoding.
func prescanMeta(head []byte) (pe pageEncoding, ok, bad bool) {
	if indexFold(head, "<meta") < 0 {
		return pageEncoding{}, false, false // spare the tokenizer
	}
	z := html.NewTokenizer(bytes.NewReader(head))
	var seen [3]bool // http-equiv, content, charset
	for {
		switch z.Next() {
		case html.ErrorToken:
			return pageEncoding{}, false, bad
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if string(name) != "meta" {
				continue
			}
			seen = [3]bool{}
			pragma := false
			var label string
			need := 0 // 0: no declaration, 1: needs the pragma, 2: does not
			for more {
				var key, val []byte
				key, val, more = z.TagAttr()
				switch string(key) {
				case "http-equiv":
					if !seen[0] {
						seen[0] = true
						pragma = asciiEqualFold(val, "content-type")
					}
				case "content":
					if !seen[1] {
						seen[1] = true
						if need == 0 {
							if l, found := metaContentCharset(string(val)); found {
								label, need = l, 1
							}
						}
					}
				case "charset":
					if !seen[2] {
						seen[2] = true
						label, need = string(val), 2
					}
				}
			}
			if need == 0 || need == 1 && !pragma {
				continue
			}
			enc, known := lookupLabel(label)
			if !known {
				bad = bad || strings.TrimSpace(label) != ""
				continue
			}
			switch enc.name {
			case "utf-16be", "utf-16le":
				enc = utf8Encoding
			case "x-user-defined":
				enc = windows1252Enc
			}
			return enc, true, bad
		}
	}
}

// metaContentCharset extracts the charset from a <meta content> value,
// as the HTML standard's "extracting a character encoding from a meta
// element" does: the first "charset" (any case) followed by optional
// spaces and "=", then a quoted or unquoted value. found is false when
// there is none or a quote is not closed.
func metaContentCharset(s string) (string, bool) {
	for {
		i := indexFold(s, "charset")
		if i < 0 {
			return "", false
		}
		s = strings.TrimLeft(s[i+len("charset"):], " \t\n\f\r")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
		if s == "" {
			return "", false
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return "", false
			}
			return s[1 : end+1], true
		}
		end := strings.IndexAny(s, "; \t\n\f\r")
		if end < 0 {
			end = len(s)
		}
		return s[:end], true
	}
}

// indexFold is strings.Index for an ASCII lower-case word, matching any
// case.
func indexFold[S ~string | ~[]byte](s S, word string) int {
next:
	for i := 0; i+len(word) <= len(s); i++ {
		for j := range len(word) {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				continue next
			}
		}
		return i
	}
	return -1
}
