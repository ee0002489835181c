package urlnorm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/nlnwa/whatwg-url/canonicalizer"
	werrors "github.com/nlnwa/whatwg-url/errors"
	wurl "github.com/nlnwa/whatwg-url/url"
)

// ErrUnsupportedScheme is wrapped by errors for URLs whose scheme is not
// http or https.
var ErrUnsupportedScheme = errors.New("unsupported scheme")

// ErrInvalid is wrapped by errors for URLs that cannot be parsed or whose
// host is not acceptable.
var ErrInvalid = errors.New("invalid URL")

// maxQuoted is how many bytes of an offending URL an error quotes.
const maxQuoted = 200

// parser is the WHATWG parser with the canonicalization steps of rules 2, 6
// (single percent sign) and 8. It only reads its options, so it is safe for
// concurrent use.
var parser = canonicalizer.New(
	wurl.WithPercentEncodeSinglePercentSign(),
	canonicalizer.WithRemoveUserInfo(),
	canonicalizer.WithRemoveFragment(),
)

// canon applies parser's canonicalization steps to a URL parsed with the
// plain WHATWG parser (as Url.Parse does for references).
var canon = parser.(interface {
	Canonicalize(*wurl.Url) (*wurl.Url, error)
})

// Normalize parses raw (absolute) and returns its canonical string; the
// string is what is logged and fingerprinted. See the package documentation
// for the rules. It is safe for concurrent use.
func Normalize(raw string) (string, error) {
	if isCanonical(raw) {
		return raw, nil
	}
	return normalizeSlow(raw)
}

// normalizeSlow is Normalize without the fast path.
func normalizeSlow(raw string) (string, error) {
	u, err := parser.Parse(raw)
	if err != nil {
		return "", parseError(raw, err)
	}
	return finish(raw, u)
}

// Resolve resolves ref against base (both may be unnormalized) and
// normalizes the result. It is safe for concurrent use. Callers resolving
// many references against one base should use [NewBase].
func Resolve(base *url.URL, ref string) (string, error) {
	if base == nil {
		return Normalize(ref)
	}
	b, err := NewBase(base.String())
	if err != nil {
		return "", err
	}
	return b.Resolve(ref)
}

// Base is a parsed base URL against which references are resolved. A Base is
// immutable and safe for concurrent use.
type Base struct {
	u      *wurl.Url
	href   string // canonical base URL
	origin string // "scheme://host[:port]" of href
	dir    string // href up to and including the last '/' of its path
}

// NewBase parses and normalizes raw for use as a base URL.
func NewBase(raw string) (*Base, error) {
	u, err := parser.Parse(raw)
	if err != nil {
		return nil, parseError(raw, err)
	}
	href, err := finish(raw, u)
	if err != nil {
		return nil, err
	}
	// finish only accepts hierarchical http(s) URLs, so href has "://" and a
	// path starting with "/".
	// Url.Parse clones the base, and Clone initializes the search parameters
	// lazily; do it now so that concurrent Resolve calls only read u.
	u.SearchParams()
	i := strings.Index(href, "://") + 3
	j := i + strings.IndexByte(href[i:], '/')
	p := href
	if q := strings.IndexByte(p, '?'); q >= 0 {
		p = p[:q]
	}
	dir := p[:strings.LastIndexByte(p, '/')+1]
	return &Base{u: u, href: href, origin: href[:j], dir: dir}, nil
}

// String returns the canonical base URL.
func (b *Base) String() string { return b.href }

// Resolve resolves ref against b and normalizes the result.
func (b *Base) Resolve(ref string) (string, error) {
	if r, ok := b.resolveFast(ref); ok {
		return r, nil
	}
	return b.resolveSlow(ref)
}

// resolveFast resolves the common shapes of already-canonical references
// without the parser: absolute URLs, path-absolute and path-relative
// references (with leading "./" and "../" segments), each with an optional
// fragment, and fragment-only references. ok is false when the parser is
// needed.
func (b *Base) resolveFast(ref string) (string, bool) {
	if isCanonical(ref) {
		return ref, true
	}
	// A fragment does not change the result; the part before it must be
	// canonical by itself (then no trimming or tab removal applies to it).
	if h := strings.IndexByte(ref, '#'); h >= 0 {
		ref = ref[:h]
		if ref == "" {
			return b.href, true
		}
		if isCanonical(ref) {
			return ref, true
		}
	}
	if isCanonicalAbsPath(ref) {
		return b.origin + ref, true
	}
	dirPath := b.dir[len(b.origin):] // starts with '/'
	for {
		if strings.HasPrefix(ref, "./") {
			ref = ref[2:]
		} else if strings.HasPrefix(ref, "../") {
			ref = ref[3:]
			if dirPath != "/" {
				dirPath = dirPath[:strings.LastIndexByte(dirPath[:len(dirPath)-1], '/')+1]
			}
		} else {
			break
		}
	}
	if isCanonicalRelPath(ref) {
		return b.origin + dirPath + ref, true
	}
	return "", false
}

// resolveSlow is Resolve without the fast paths.
func (b *Base) resolveSlow(ref string) (string, error) {
	u, err := b.u.Parse(ref)
	if err != nil {
		return "", parseError(ref, err)
	}
	// Url.Parse uses the plain WHATWG parser; apply the profile's steps.
	if u, err = canon.Canonicalize(u); err != nil {
		return "", parseError(ref, err)
	}
	return finish(ref, u)
}

// finish checks the scheme and host of a parsed URL and applies rule 6's
// escape normalization to its path and query.
func finish(raw string, u *wurl.Url) (string, error) {
	scheme := u.Scheme()
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("urlnorm: %w %q in %s", ErrUnsupportedScheme, scheme, quote(raw))
	}
	host := u.Hostname()
	if !validHost(host) {
		return "", fmt.Errorf("urlnorm: %w: bad host %q in %s", ErrInvalid, host, quote(raw))
	}
	href := u.Href(true)
	// The path starts after "scheme://host[:port]".
	i := len(scheme) + 3
	j := i + strings.IndexByte(href[i:], '/')
	if j < i {
		return "", fmt.Errorf("urlnorm: %w: no path in %s", ErrInvalid, quote(raw))
	}
	return href[:j] + normalizeEscapes(href[j:]), nil
}

// validHost reports whether h is a lower-case DNS-style name of a-z, 0-9,
// '-', '_' and '.', or a bracketed IPv6 literal.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	if h[0] == '[' {
		if h[len(h)-1] != ']' {
			return false
		}
		for i := 1; i < len(h)-1; i++ {
			c := h[i]
			if !(isDigit(c) || ('a' <= c && c <= 'f') || c == ':' || c == '.') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(isLower(c) || isDigit(c) || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// normalizeEscapes decodes escapes of unreserved characters and upper-cases
// the hex digits of all other escapes. It returns s itself when nothing
// changes.
func normalizeEscapes(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && needsFix(s[i+1], s[i+2]) {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	sb.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			sb.WriteByte(c)
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) {
			sb.WriteByte(v)
		} else {
			sb.WriteByte('%')
			sb.WriteByte(upperHex[v>>4])
			sb.WriteByte(upperHex[v&15])
		}
		i += 2
	}
	return sb.String()
}

const upperHex = "0123456789ABCDEF"

// needsFix reports whether the escape %ab is not in normal form.
func needsFix(a, b byte) bool {
	if !isHex(a) || !isHex(b) {
		return false
	}
	if isLowerHexLetter(a) || isLowerHexLetter(b) {
		return true
	}
	return isUnreserved(unhex(a)<<4 | unhex(b))
}

func isDigit(c byte) bool          { return '0' <= c && c <= '9' }
func isLower(c byte) bool          { return 'a' <= c && c <= 'z' }
func isLowerHexLetter(c byte) bool { return 'a' <= c && c <= 'f' }
func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func isUnreserved(c byte) bool {
	return isLower(c) || ('A' <= c && c <= 'Z') || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// parseError wraps a parser failure as a one-line error.
func parseError(raw string, err error) error {
	var msg string
	switch t := werrors.Type(err); t {
	case "":
		msg = err.Error()
	case werrors.MissingSchemeNonRelativeURL:
		msg = "missing scheme"
	default:
		msg = string(t)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 100 {
		msg = msg[:100] + "..."
	}
	if msg != "" && 'A' <= msg[0] && msg[0] <= 'Z' {
		msg = string(msg[0]+'a'-'A') + msg[1:]
	}
	return fmt.Errorf("urlnorm: %w %s: %s", ErrInvalid, quote(raw), msg)
}

// quote returns raw quoted with %q, truncated to maxQuoted bytes.
func quote(raw string) string {
	if len(raw) > maxQuoted {
		return fmt.Sprintf("%q...", raw[:maxQuoted])
	}
	return fmt.Sprintf("%q", raw)
}
