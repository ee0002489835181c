package extract

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/transform"
)

// queryEncoder percent-encodes the query of references on a page whose
// encoding is not UTF-8, as the WHATWG URL parser does in its query state
// given the document's encoding: the query is encoded in the page's
// encoding; every resulting byte in the special-query percent-encode set
// (C0 controls, space, the quotation mark, the apostrophe, '#', '<', '>'
// and every byte above 0x7E) is percent-encoded and the others are kept
// as they are (Shift_JIS '本' is 0x96 0x7B: "%96{"); a character the
// encoding cannot represent becomes "%26%23" + its decimal code point +
// "%3B" (an HTML character reference). The path and the host are left to
// the URL parser (UTF-8 and IDNA, whatever the page's encoding).
//
// Only the query's non-ASCII characters depend on the encoding: the
// encoders map ASCII to itself (the WHATWG ISO-2022-JP encoder refuses
// ESC, SO and SI, which x/text's passes through), so a reference whose
// query is ASCII is returned unchanged.
type queryEncoder struct {
	name string
	t    transform.Transformer // the page encoding's encoder
	src  []byte
	out  []byte
}

// encode returns ref with its query percent-encoded, or ref itself when
// its query (if any) is ASCII.
func (q *queryEncoder) encode(ref string) string {
	// The parser first trims leading and trailing C0 controls and spaces
	// and removes tabs and newlines; the query is then what follows the
	// first '?' up to the first '#' (no earlier delimiter of an http(s)
	// URL can hold a '?': the authority and the path end at it).
	qs, qe := -1, len(ref)
	ascii := true
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if c == '#' {
			qe = i
			break
		}
		if c == '?' && qs < 0 {
			qs = i + 1
		} else if c >= utf8.RuneSelf && qs >= 0 {
			ascii = false
		}
	}
	if qs < 0 || ascii {
		return ref
	}
	// Strip as the parser would before the query is cut out, so that a
	// trailing space or an inner tab is not encoded into it.
	start, end := 0, len(ref)
	for start < end && ref[start] <= ' ' {
		start++
	}
	for end > start && ref[end-1] <= ' ' {
		end--
	}
	qe = min(qe, end)
	q.src = q.src[:0]
	for i := qs; i < qe; i++ {
		if c := ref[i]; c != '\t' && c != '\n' && c != '\r' {
			q.src = append(q.src, c)
		}
	}
	q.src = premap(q.name, q.src)
	q.out = append(q.out[:0], ref[start:qs]...)
	q.out = q.percentEncode(q.out, q.src)
	q.out = append(q.out, ref[qe:end]...)
	return string(q.out)
}

// percentEncode appends src, encoded with q's encoder and percent-encoded,
// to dst.
func (q *queryEncoder) percentEncode(dst, src []byte) []byte {
	q.t.Reset()
	var buf [128]byte
	for {
		n, m, err := q.t.Transform(buf[:], src, true)
		for _, b := range buf[:n] {
			if inSpecialQuerySet(b) {
				dst = append(dst, '%', upperHex[b>>4], upperHex[b&15])
			} else {
				dst = append(dst, b)
			}
		}
		src = src[m:]
		switch {
		case err == nil:
			return dst
		case errors.Is(err, transform.ErrShortDst) && (n > 0 || m > 0):
		case isRepertoireError(err) && len(src) > 0:
			r, size := utf8.DecodeRune(src)
			src = src[size:]
			dst = append(dst, "%26%23"...)
			dst = strconv.AppendUint(dst, uint64(r), 10)
			dst = append(dst, "%3B"...)
		default:
			// Not expected from an encoder at the end of its input; keep
			// what is left as the parser would see it (UTF-8).
			return append(dst, src...)
		}
	}
}

// isRepertoireError reports whether err is an x/text encoder's "rune not
// supported by encoding" (its type is internal to x/text; it carries a
// replacement byte).
func isRepertoireError(err error) bool {
	_, ok := err.(interface{ Replacement() byte })
	return ok
}

// inSpecialQuerySet reports whether byte b is in the WHATWG special-query
// percent-encode set.
func inSpecialQuerySet(b byte) bool {
	return b <= ' ' || b > '~' || b == '"' || b == '#' || b == '<' || b == '>' || b == '\''
}

const upperHex = "0123456789ABCDEF"

// premap applies the code point substitutions the WHATWG Shift_JIS and
// EUC-JP encoders make and x/text's do not: U+00A5 YEN SIGN is encoded as
// 0x5C, U+203E OVERLINE as 0x7E, and U+2212 MINUS SIGN as U+FF0D.
func premap(name string, s []byte) []byte {
	if name != "shift_jis" && name != "euc-jp" {
		return s
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		var to []byte
		switch r {
		case '\u00a5':
			to = []byte{'\\'}
		case '\u203e':
			to = []byte{'~'}
		case '\u2212':
			to = []byte("\uff0d")
		default:
			i += size
			continue
		}
		s = append(s[:i], append(to, s[i+size:]...)...)
		i += len(to)
	}
	return s
}
