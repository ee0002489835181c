package urlnorm

// Why the fast paths agree with the parser (FuzzNormalize checks it):
//
//   - Scheme: only the exact prefixes "http://" and "https://"; the parser
//     lower-cases the scheme and, for special schemes, reads the authority
//     after exactly these two slashes.
//   - Host: only [a-z0-9-] labels, none empty, no "xn-" prefix, the last one
//     not starting with a digit. Such a host has no escapes, is unchanged
//     by UTS #46 mapping (lower-case ASCII letters, digits and '-' map to
//     themselves and pass the STD3 rules), has no punycode to validate, and
//     is not taken for an IPv4 address (WHATWG "ends in a number" looks at
//     the last label: all digits, or "0x..." which starts with a digit).
//   - Port: 1-5 digits without a leading zero, <= 65535 and not the
//     scheme's default: the parser prints exactly these digits back.
//   - Path and query: bytes from the safe table are in neither the path
//     nor the special-query percent-encode set and are kept by escape
//     normalization; escapes must already be upper-case and not encode an
//     unreserved byte; no '#', '\', whitespace, control or non-ASCII byte,
//     so no trimming, tab removal or fragment applies; no "." or ".."
//     segment (their escaped forms contain "%2E", which is rejected), so
//     dot-segment removal does nothing.
//   - References: a path-absolute reference ("/x", not "//x") keeps the
//     base's scheme, host and port and replaces path and query; a
//     path-relative one (no ':' before its first '/' or '?', so no scheme)
//     replaces the base path's last segment, after leading "./" (ignored)
//     and "../" (each removes one more base segment, never past the root)
//     segments; a fragment is dropped by rule 8 and never influences the
//     part before it.

// isCanonical reports, by a conservative byte scan, whether s is already
// the output of Normalize for itself. It may return false for canonical
// URLs (they then take the full parser); it must never return true for a
// URL that Normalize would change or reject. FuzzNormalize checks this
// against the parser.
func isCanonical(s string) bool {
	var rest string
	var defPort string
	switch {
	case len(s) > 7 && s[:7] == "http://":
		rest, defPort = s[7:], "80"
	case len(s) > 8 && s[:8] == "https://":
		rest, defPort = s[8:], "443"
	default:
		return false
	}
	// Host: labels of [a-z0-9-], non-empty, no "xn--", the last label must
	// not start with a digit (WHATWG would parse it as an IPv4 number).
	i := 0
	labelStart := 0
	for ; i < len(rest); i++ {
		c := rest[i]
		if isLower(c) || isDigit(c) {
			continue
		}
		if c == '-' {
			if i-labelStart == 2 && rest[labelStart] == 'x' && rest[labelStart+1] == 'n' {
				return false // possible "xn--" label
			}
			continue
		}
		if c == '.' {
			if i == labelStart {
				return false
			}
			labelStart = i + 1
			continue
		}
		break
	}
	if i == 0 || i == labelStart || isDigit(rest[labelStart]) {
		return false // empty host, trailing dot or empty label, numeric last label
	}
	if i == len(rest) {
		return false // empty path becomes "/"
	}
	if rest[i] == ':' {
		j := i + 1
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		port := rest[i+1 : j]
		if len(port) == 0 || len(port) > 5 || port[0] == '0' || port == defPort {
			return false
		}
		if len(port) == 5 && port > "65535" {
			return false
		}
		i = j
		if i == len(rest) {
			return false
		}
	}
	if rest[i] != '/' {
		return false
	}
	return isCanonicalPathQuery(rest[i:])
}

// isCanonicalAbsPath reports whether ref is a path-absolute reference
// ("/..." but not "//...") whose path and query are already canonical, so
// that resolving it against an http(s) base yields base origin + ref.
func isCanonicalAbsPath(ref string) bool {
	if len(ref) == 0 || ref[0] != '/' || (len(ref) > 1 && ref[1] == '/') {
		return false
	}
	return canonicalPathQuery(ref, 1)
}

// isCanonicalRelPath reports whether ref is a path-relative reference
// ("a/b?q": no scheme, not starting with '/', '?' or '#') whose segments and
// query are already canonical, so that resolving it against an http(s)
// base yields the base's directory + ref.
func isCanonicalRelPath(ref string) bool {
	if len(ref) == 0 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if c == '/' || c == '?' {
			break
		}
		if c == ':' {
			return false // could be a scheme
		}
	}
	return safe[ref[0]] && canonicalPathQuery(ref, 0)
}

// isCanonicalPathQuery reports whether p, which starts with '/', is a
// path with an optional query that the parser would leave unchanged.
func isCanonicalPathQuery(p string) bool { return canonicalPathQuery(p, 1) }

// canonicalPathQuery reports whether p[from:], the rest of a path with an
// optional query, would be left unchanged by the parser: only safe
// characters, normalized escapes, no dot segments, no fragment. A path
// segment starts at from.
func canonicalPathQuery(p string, from int) bool {
	inQuery := false
	segStart := from // index of the first byte of the current path segment
	for i := from; i < len(p); i++ {
		c := p[i]
		switch {
		case safe[c]:
		case c == '/':
			if !inQuery {
				if isDotSegment(p[segStart:i]) {
					return false
				}
				segStart = i + 1
			}
		case c == '?':
			if !inQuery {
				if isDotSegment(p[segStart:i]) {
					return false
				}
				inQuery = true
			}
		case c == '%':
			if i+2 >= len(p) {
				return false
			}
			a, b := p[i+1], p[i+2]
			if !isUpperHex(a) || !isUpperHex(b) || isUnreserved(unhex(a)<<4|unhex(b)) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	if !inQuery && isDotSegment(p[segStart:]) {
		return false
	}
	return true
}

func isDotSegment(s string) bool { return s == "." || s == ".." }

func isUpperHex(c byte) bool { return isDigit(c) || ('A' <= c && c <= 'F') }

// safe holds the bytes that the parser copies unchanged into both the path
// and the query of an http(s) URL and that escape normalization keeps:
// unreserved characters and the sub-delimiters except "'", plus ':' and '@'.
var safe = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&()*+,;=:@" {
		t[c] = true
	}
	return t
}()
