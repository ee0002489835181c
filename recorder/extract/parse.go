package extract

// isSpace reports whether c is ASCII whitespace as the HTML standard
// defines it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// splitSrcset appends the candidate URLs of a srcset value to dst, following
// the HTML standard's "parse a srcset attribute": URLs are runs of
// non-whitespace; a URL's trailing commas end the candidate; otherwise its
// descriptors run to the next comma outside parentheses.
func splitSrcset(dst []string, v []byte) []string {
	i := 0
	for {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			return dst
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		if len(u) > 0 && u[len(u)-1] == ',' {
			for len(u) > 0 && u[len(u)-1] == ',' {
				u = u[:len(u)-1]
			}
			if len(u) > 0 {
				dst = append(dst, string(u))
			}
			continue
		}
		dst = append(dst, string(u))
		// Skip descriptors up to a comma outside parentheses.
		depth := 0
		for i < len(v) {
			c := v[i]
			i++
			if c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
	}
}

// skipSpace returns the index of the first byte of v from i on that is
// not ASCII whitespace (len(v) when there is none).
func skipSpace(v []byte, i int) int {
	for i < len(v) && isSpace(v[i]) {
		i++
	}
	return i
}

// parseRefresh parses a meta refresh content value following the HTML
// standard's shared declarative refresh steps. ok is false for a malformed
// value; hasURL is false for a refresh of the page itself ("5").
func parseRefresh(v []byte) (ref string, ok, hasURL bool) {
	i := skipSpace(v, 0)
	digits := i
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	if i == digits && (i >= len(v) || v[i] != '.') {
		return "", false, false
	}
	for i < len(v) && (('0' <= v[i] && v[i] <= '9') || v[i] == '.') {
		i++
	}
	if i >= len(v) {
		return "", true, false
	}
	if c := v[i]; c != ';' && c != ',' && !isSpace(c) {
		return "", false, false
	}
	i = skipSpace(v, i)
	if i < len(v) && (v[i] == ';' || v[i] == ',') {
		i++
	}
	i = skipSpace(v, i)
	if i >= len(v) {
		return "", true, false
	}
	u := v[i:]
	// "url" "=" prefix, case-insensitive, with optional whitespace.
	if len(u) >= 3 && asciiEqualFold(u[:3], "url") {
		j := skipSpace(u, 3)
		if j < len(u) && u[j] == '=' {
			u = u[skipSpace(u, j+1):]
		}
	}
	// Quotes.
	if len(u) > 0 && (u[0] == '\'' || u[0] == '"') {
		q := u[0]
		u = u[1:]
		for j := range u {
			if u[j] == q {
				u = u[:j]
				break
			}
		}
	}
	return string(u), true, true
}
