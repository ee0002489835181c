package main

// An independent reference for the real-site crawl test (realweb_test.go):
// which URLs a crawl of static HTML trees served by `testweb --site` must
// log and fetch, worked out from the files on disk. It shares no code with
// the crawler's recorder/extract (links), recorder/urlnorm (WHATWG parsing
// and normalization) or recorder/urlfilter: links are found with
// golang.org/x/net/html's tokenizer and a table of its own, resolved with
// net/url's RFC 3986 ResolveReference, and normalized by the rules that
// docs/trace-format.md documents, written here again from that text.
// Where the two resolvers disagree by design, refNormalize says so (see
// the list above it).

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/idna"
)

// refAttrs lists, per attribute, the elements whose attribute holds a URL
// (recorder/extract's documented table; meta refresh is handled apart).
var refAttrs = map[string][]string{
	"href":       {"a", "area", "link", "base"},
	"src":        {"img", "script", "iframe", "frame", "embed", "source", "audio", "video", "track", "input"},
	"srcset":     {"img", "source"},
	"action":     {"form"},
	"formaction": {"button", "input"},
	"data":       {"object"},
	"cite":       {"blockquote", "q", "del", "ins"},
	"poster":     {"video"},
	"background": {"body"},
}

func refCarries(tag, attr string) bool {
	for _, t := range refAttrs[attr] {
		if t == tag {
			return true
		}
	}
	return false
}

// refPageLinks returns the normalized absolute URLs of the links of a
// page (at URL page), in document order, duplicates included. A <base
// href> that resolves sets the base of the links after it (only the
// first one counts) and is a link itself. Links rule difference 7 cannot
// decide are returned as errors.
func refPageLinks(page string, body []byte) (links []string, undecided []error) {
	base := page
	baseSet := false
	emit := func(against, ref string) (string, bool) {
		u, ok, err := refNormalize(against, ref)
		if err != nil {
			undecided = append(undecided, err)
		}
		if ok {
			links = append(links, u)
		}
		return u, ok
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return links, undecided
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		t := z.Token()
		tag := t.Data
		if tag == "meta" {
			var httpEquiv, content string
			for _, a := range t.Attr {
				switch a.Key {
				case "http-equiv":
					httpEquiv = a.Val
				case "content":
					content = a.Val
				}
			}
			if strings.EqualFold(strings.TrimSpace(httpEquiv), "refresh") {
				if ref, ok := refRefreshURL(content); ok {
					emit(base, ref)
				}
			}
			continue
		}
		for _, a := range t.Attr {
			if !refCarries(tag, a.Key) {
				continue
			}
			refs := []string{a.Val}
			if a.Key == "srcset" {
				refs = refSrcset(a.Val)
			}
			for _, ref := range refs {
				if tag != "base" {
					emit(base, ref)
				} else if u, ok := emit(page, ref); ok && !baseSet {
					base, baseSet = u, true
				}
			}
		}
	}
}

// refSrcset splits a srcset into its URLs (HTML: a candidate is a URL up
// to whitespace, its trailing commas removed, then descriptors up to a
// comma outside parentheses).
func refSrcset(s string) []string {
	var out []string
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	i := 0
	for i < len(s) {
		for i < len(s) && (isSpace(s[i]) || s[i] == ',') {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		u := s[i:j]
		descriptors := !strings.HasSuffix(u, ",")
		u = strings.TrimRight(u, ",")
		if u != "" {
			out = append(out, u)
		}
		i = j
		if descriptors {
			depth := 0
			for i < len(s) && (s[i] != ',' || depth > 0) {
				switch s[i] {
				case '(':
					depth++
				case ')':
					depth--
				}
				i++
			}
		}
	}
	return out
}

// refRefreshURL takes the URL out of a meta refresh's content, as HTML's
// shared declarative refresh steps do ("5; url=/x", "0;URL='/x'",
// "3, /y"); ok is false without one ("5") or when content is malformed.
func refRefreshURL(c string) (string, bool) {
	ws := func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r' }
	i := 0
	for i < len(c) && ws(c[i]) {
		i++
	}
	digits := i
	for i < len(c) && c[i] >= '0' && c[i] <= '9' {
		i++
	}
	if i == digits && (i >= len(c) || c[i] != '.') {
		return "", false
	}
	for i < len(c) && (c[i] >= '0' && c[i] <= '9' || c[i] == '.') {
		i++
	}
	if i < len(c) {
		if c[i] != ';' && c[i] != ',' && !ws(c[i]) {
			return "", false
		}
		for i < len(c) && ws(c[i]) {
			i++
		}
		if i < len(c) && (c[i] == ';' || c[i] == ',') {
			i++
		}
		for i < len(c) && ws(c[i]) {
			i++
		}
	}
	if i >= len(c) {
		return "", false
	}
	if len(c)-i >= 3 && strings.EqualFold(c[i:i+3], "url") {
		j := i + 3
		for j < len(c) && ws(c[j]) {
			j++
		}
		if j < len(c) && c[j] == '=' {
			j++
			for j < len(c) && ws(c[j]) {
				j++
			}
			i = j
		}
	}
	rest := c[i:]
	if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
		q := rest[0]
		rest = rest[1:]
		if k := strings.IndexByte(rest, q); k >= 0 {
			rest = rest[:k]
		}
	}
	return rest, true
}

// Rule differences between this reference (net/url, RFC 3986) and the
// crawler (WHATWG URL parsing), and what refNormalize does about each:
//
//  1. WHATWG strips leading and trailing C0 controls and spaces and
//     removes tabs and newlines; net/url refuses them. Done here first.
//  2. WHATWG reads "\" as "/" in http(s) URLs before the query; net/url
//     keeps it. Replaced here before parsing.
//  3. WHATWG resolves "http:x" (no slashes, same scheme as the base) as a
//     relative reference; net/url makes it opaque. Done here.
//  4. net/url refuses a "%" that does not start an escape, and escapes in
//     the fragment; WHATWG keeps them ("%" becomes "%25" by rule 6). The
//     fragment is cut off first (rule 8) and such a "%" written "%25".
//  5. "%2e" path segments are dot segments for WHATWG, not for net/url:
//     decoded here before resolving.
//  6. The query: net/url keeps it verbatim, WHATWG percent-encodes the
//     special-query set (C0, space, " # < > ' and non-ASCII). Done here,
//     on the query cut off before parsing.
//  7. net/url escapes a whole path again, with its own set (which also
//     takes ! ' ( ) * [ ]), as soon as the path holds one byte it does
//     not allow raw; WHATWG escapes only its path set. So the bytes of
//     WHATWG's path set are escaped here before parsing (net/url then
//     keeps the path as written), and "|" and "^", which WHATWG keeps raw
//     and net/url does not, are given to net/url as %7C and %5E and
//     written raw again after. A path that holds both "|" and "%7C" (or
//     "^" and "%5E") cannot be told apart that way: refNormalize returns
//     errUndecided for it, and the test fails naming it.
//  8. Hosts: net/url accepts "<", ">", '"' and more in a host; the
//     crawler's rule 3 allows only a-z 0-9 - _ . (after IDNA) or an IPv6
//     literal. Checked here.
//  9. Ports above 65535 parse with net/url, not with WHATWG: refused here.

// errUndecided marks a reference rule difference 7 cannot decide.
var errUndecided = errors.New("path with both | and %7C, or ^ and %5E")

// refParse parses a path-and-before part (no query, no fragment) for
// net/url, escaping WHATWG's path set, controls and non-ASCII, and "|"
// and "^" (rule difference 7); marked reports that it escaped "|" or "^".
func refParse(s string) (u *url.URL, marked bool, err error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '|' || c == '^' {
			marked = true
		}
		if c < 0x21 || c >= 0x7f || c == '|' || c == '^' || strings.IndexByte(refPathSet, c) >= 0 {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
			continue
		}
		b.WriteByte(c)
	}
	u, err = url.Parse(b.String())
	return u, marked, err
}

// refNormalize resolves ref against base (a URL refNormalize returned)
// and normalizes it by the rules of docs/trace-format.md; ok is false for
// a URL the crawler does not log (another scheme, a malformed URL).
func refNormalize(base, ref string) (string, bool, error) {
	basePath, baseQuery, baseHasQuery := strings.Cut(base, "?")
	b, bMarked, err := refParse(basePath)
	if err != nil {
		return "", false, err
	}
	// 1.
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= ' ' })
	ref = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(ref)
	// 4, 8: the fragment goes.
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		ref = ref[:i]
	}
	// 2.
	if q := strings.IndexByte(ref, '?'); q >= 0 {
		ref = strings.ReplaceAll(ref[:q], `\`, "/") + ref[q:]
	} else {
		ref = strings.ReplaceAll(ref, `\`, "/")
	}
	// 3.
	if i := strings.IndexByte(ref, ':'); i > 0 && strings.EqualFold(ref[:i], b.Scheme) && !strings.HasPrefix(ref[i+1:], "//") {
		ref = ref[i+1:]
	}
	// 4: a lone "%" is "%25".
	ref = refFixPercent(ref)
	// 5, 6: the query apart.
	pathPart, query, hasQuery := strings.Cut(ref, "?")
	pathPart = strings.NewReplacer("%2e", ".", "%2E", ".").Replace(pathPart)
	r, rMarked, err := refParse(pathPart)
	if err != nil {
		return "", false, nil
	}
	u := b.ResolveReference(r)
	if u.Scheme != "http" && u.Scheme != "https" || u.Opaque != "" {
		return "", false, nil
	}
	if !hasQuery && r.Scheme == "" && r.Host == "" && r.Path == "" {
		// An empty reference: the base's query stays.
		query, hasQuery = baseQuery, baseHasQuery
	}

	// The host (8), lower case, IDNA, IPv4 and IPv6 forms.
	host, ok := refHost(u)
	if !ok {
		return "", false, nil
	}
	// The port (9): default dropped, leading zeros too.
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 {
			return "", false, nil
		}
		if (u.Scheme == "http" && n == 80) || (u.Scheme == "https" && n == 443) {
			port = ""
		} else {
			port = strconv.Itoa(n)
		}
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if bMarked || rMarked { // 7.
		for _, in := range []string{basePath, pathPart} {
			l := strings.ToUpper(in)
			if strings.Contains(l, "%7C") || strings.Contains(l, "%5E") {
				return "", false, fmt.Errorf("%w: %q against %q", errUndecided, ref, base)
			}
		}
		p = strings.NewReplacer("%7C", "|", "%5E", "^").Replace(p)
	}
	var sb strings.Builder
	sb.WriteString(u.Scheme + "://" + host)
	if port != "" {
		sb.WriteString(":" + port)
	}
	sb.WriteString(refEscapes(p, refPathSet))
	if hasQuery {
		sb.WriteString("?" + refEscapes(refFixPercent(query), refQuerySet))
	}
	return sb.String(), true, nil
}

// refHost is u's host as rule 3 writes it: an IPv6 literal in WHATWG's
// form, an IPv4 address (in any form WHATWG reads) in dotted decimal,
// otherwise lower case and IDNA, of a-z 0-9 - _ . only.
func refHost(u *url.URL) (string, bool) {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
		return "[" + refIPv6(a) + "]", true
	}
	if hasNonASCII(host) {
		h, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", false
		}
		host = h
	}
	if a, isIP, ok := refIPv4(host); isIP {
		return a, ok
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", false
		}
	}
	return host, true
}

// refIPv4 reads host as WHATWG's IPv4 parser does when its last label is
// a number (decimal, 0x hex or 0 octal; fewer than four parts allowed):
// isIP reports that it is meant as an address, ok that it is one.
func refIPv4(host string) (addr string, isIP, ok bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	num := func(p string) (uint64, bool) {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
		case len(p) >= 2 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" {
			return 0, true // "0x" is 0
		}
		n, err := strconv.ParseUint(p, base, 64)
		return n, err == nil
	}
	last := parts[len(parts)-1]
	if last == "" {
		return "", false, false
	}
	allDigits := strings.Trim(last, "0123456789") == ""
	if _, hexOK := num(last); !allDigits && !(hexOK && len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X")) {
		return "", false, false
	}
	if len(parts) > 4 {
		return "", true, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := num(p)
		if !ok || p == "" {
			return "", true, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return "", true, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(5 - len(parts))
		if n >= 1<<(8*rest) {
			return "", true, false
		}
		v = v<<(8*rest) | n
	}
	return fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&255, v>>8&255, v&255), true, true
}

// refIPv6 writes an IPv6 address as WHATWG does: eight hex pieces, the
// first longest run of two or more zero pieces written "::".
func refIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		if j == i {
			j++
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == start {
			sb.WriteString("::")
			i += length - 1
			continue
		}
		if sb.Len() > 0 && !strings.HasSuffix(sb.String(), ":") {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
	}
	return sb.String()
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// refFixPercent writes a "%" that does not start an escape as "%25".
func refFixPercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// The bytes percent-encoded in a path and a query (WHATWG's path and
// special-query percent-encode sets), besides C0 controls, DEL and
// non-ASCII.
const (
	refPathSet  = " \"#<>?`{}"
	refQuerySet = " \"#<>'"
)

// refEscapes percent-encodes the bytes of set (and controls and
// non-ASCII) and then writes every escape as RFC 3986 section 6.2.2 says:
// unreserved characters decoded, upper-case hex otherwise.
func refEscapes(s, set string) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			d := byte(v)
			if d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' || d == '-' || d == '.' || d == '_' || d == '~' {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(hexd[d>>4])
				b.WriteByte(hexd[d&15])
			}
			i += 2
		case c < 0x21 || c >= 0x7f || strings.IndexByte(set, c) >= 0:
			b.WriteByte('%')
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// refFilter is the crawler's URL filter at its defaults, by its documented
// rules: at most 2048 bytes, 16 non-empty path segments, no non-empty
// segment more than 3 times.
func refFilter(u string) bool {
	if len(u) > 2048 {
		return false
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	seen := map[string]int{}
	depth := 0
	for _, seg := range strings.Split(p.EscapedPath(), "/") {
		if seg == "" {
			continue
		}
		depth++
		seen[seg]++
		if seen[seg] > 3 {
			return false
		}
	}
	return depth <= 16
}

// refAnswer is how `testweb --site` answers a request (net/http's
// FileServer over the site's directory, modelled by refServe): a file, a
// redirect, a directory listing or an error.
type refAnswer struct {
	status   int
	location string   // a redirect's Location, relative as FileServer writes it
	html     []byte   // an HTML body to extract links from
	listing  []string // a directory listing's hrefs
}

func refServe(dir string, u *url.URL) refAnswer {
	upath := u.Path
	if !strings.HasPrefix(upath, "/") {
		upath = "/" + upath
	}
	redirect := func(to string) refAnswer {
		if u.RawQuery != "" {
			to += "?" + u.RawQuery
		}
		return refAnswer{status: http.StatusMovedPermanently, location: to}
	}
	if strings.HasSuffix(upath, "/index.html") {
		return redirect("./")
	}
	name := filepath.Join(dir, filepath.FromSlash(path.Clean(upath)))
	fi, err := os.Stat(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return refAnswer{status: http.StatusNotFound}
		}
		return refAnswer{status: http.StatusInternalServerError}
	}
	if fi.IsDir() && !strings.HasSuffix(upath, "/") {
		return redirect(path.Base(upath) + "/")
	}
	if !fi.IsDir() && strings.HasSuffix(upath, "/") {
		return redirect("../" + path.Base(upath))
	}
	if fi.IsDir() {
		if ifi, err := os.Stat(filepath.Join(name, "index.html")); err == nil && !ifi.IsDir() {
			name, fi = filepath.Join(name, "index.html"), ifi
		} else {
			ents, err := os.ReadDir(name)
			if err != nil {
				return refAnswer{status: http.StatusInternalServerError}
			}
			sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
			var hrefs []string
			for _, e := range ents {
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				hrefs = append(hrefs, (&url.URL{Path: n}).String())
			}
			return refAnswer{status: http.StatusOK, listing: hrefs}
		}
	}
	ctype := mime.TypeByExtension(filepath.Ext(name))
	isHTML := func(ct string) bool {
		ct = strings.ToLower(ct)
		return strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml+xml")
	}
	if ctype != "" && !isHTML(ctype) {
		return refAnswer{status: http.StatusOK}
	}
	body, err := os.ReadFile(name)
	if err != nil {
		return refAnswer{status: http.StatusInternalServerError}
	}
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	if isHTML(ctype) {
		return refAnswer{status: http.StatusOK, html: body}
	}
	return refAnswer{status: http.StatusOK}
}

// refCrawl is the reference crawl: from seeds, every URL of a live origin
// is fetched (from disk for a site, a 404 for any other host); a fetched
// page's links and a redirect's target are logged (after the filter) and
// followed. URLs of every other origin are logged but not fetched.
type refCrawl struct {
	origin  func(o string) (site string, live bool) // "scheme://host[:port]"
	urls    map[string]bool                         // every distinct URL logged
	fetched map[string]bool                         // the URLs of live origins
	dead    map[string]bool                         // the URLs of other origins
	pages   int                                     // HTML pages and directory listings read
	// undecided lists the links rule difference 7 cannot decide.
	undecided []error
}

// errRootHost: testweb answers a request to an IP address or localhost
// with its own root index, which the reference does not model.
var errRootHost = errors.New("reference: a live origin addresses testweb itself (IP address or localhost)")

func newRefCrawl(origin func(string) (string, bool), seeds []string) (*refCrawl, error) {
	c := &refCrawl{origin: origin, urls: map[string]bool{}, fetched: map[string]bool{}, dead: map[string]bool{}}
	var queue []string
	add := func(u string) {
		if !c.urls[u] && refFilter(u) {
			c.urls[u] = true
			queue = append(queue, u)
		}
	}
	follow := func(base, ref string) {
		u, ok, err := refNormalize(base, ref)
		if err != nil {
			c.undecided = append(c.undecided, err)
		}
		if ok {
			add(u)
		}
	}
	for _, s := range seeds {
		p, err := url.Parse(s)
		if err != nil || p.Path == "" {
			return nil, fmt.Errorf("seed %q: want an absolute URL with a path", s)
		}
		follow(s, s)
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("reference URL %q: %w", s, err)
		}
		dir, live := origin(u.Scheme + "://" + u.Host)
		if !live {
			c.dead[s] = true
			continue
		}
		c.fetched[s] = true
		if dir == "" {
			h := strings.Trim(u.Hostname(), "[]")
			if h == "localhost" || net.ParseIP(h) != nil {
				return nil, fmt.Errorf("%w: %s", errRootHost, s)
			}
			continue // "testweb: unknown host", a 404 without links
		}
		a := refServe(dir, u)
		switch {
		case a.location != "":
			follow(s, a.location)
		case a.html != nil:
			c.pages++
			links, undecided := refPageLinks(s, a.html)
			c.undecided = append(c.undecided, undecided...)
			for _, l := range links {
				add(l)
			}
		case a.listing != nil:
			c.pages++
			for _, h := range a.listing {
				follow(s, h)
			}
		}
	}
	return c, nil
}

// originOf is "scheme://host[:port]" of a normalized URL.
func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}
