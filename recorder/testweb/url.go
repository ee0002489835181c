package testweb

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Kinds of resource a target names.
const (
	kPage    uint8 = iota // id 0: "/", else "/p/ID.html"
	kPrivate              // "/private/ID.html" (disallowed by robots.txt where present)
	kImg                  // "/img/ID.png"
	kJS                   // "/js/ID.js"
	kCSS                  // "/css/ID.css"
	kSearch               // "/search" (a form's action)
	kRobots               // "/robots.txt"
	kCal                  // trap hosts: "/cal/YYYY/MM", id = year*12 + month-1
	kDeep                 // trap hosts: "/" + "a/" x id
	kRoot                 // the root index (a request by IP address)
)

// numbered spells the paths of the kinds named by a number, indexed by
// kind: dir, the id in decimal, ext ("/img/7.png"). The home page (kPage,
// id 0) is "/" instead.
var numbered = [...]struct{ dir, ext string }{
	kPage:    {"/p/", ".html"},
	kPrivate: {"/private/", ".html"},
	kImg:     {"/img/", ".png"},
	kJS:      {"/js/", ".js"},
	kCSS:     {"/css/", ".css"},
}

// Resources per generated host: ids beyond these answer 404.
const (
	numImg = 40
	numJS  = 6
	numCSS = 3
)

// target names one URL of the web: host index (into Web.hosts; -1 for the
// root index), kind and id, plus an optional query variant.
type target struct {
	host  int32
	kind  uint8
	query uint8 // 0: none; n: "?ref=n&lang=en"
	id    int64
}

// appendPath appends the path (and query) of t; amp separates query
// parameters ("&" in a URL, "&amp;" in HTML).
func appendPath(b []byte, t target, amp string) []byte {
	switch t.kind {
	case kPage, kPrivate, kImg, kJS, kCSS:
		if t.kind == kPage && t.id == 0 {
			b = append(b, '/')
			break
		}
		p := numbered[t.kind]
		b = appendNum(b, p.dir, t.id, p.ext)
	case kSearch:
		b = append(b, "/search"...)
	case kRobots:
		b = append(b, "/robots.txt"...)
	case kCal:
		y, m := t.id/12, t.id%12+1
		b = append(b, "/cal/"...)
		switch {
		case y < 10:
			b = append(b, "000"...)
		case y < 100:
			b = append(b, "00"...)
		case y < 1000:
			b = append(b, '0')
		}
		b = strconv.AppendInt(b, y, 10)
		b = append(b, '/')
		if m < 10 {
			b = append(b, '0')
		}
		b = strconv.AppendInt(b, m, 10)
	case kDeep:
		b = append(b, '/')
		for range t.id {
			b = append(b, "a/"...)
		}
	case kRoot:
		b = append(b, '/')
	}
	if t.query != 0 {
		b = appendNum(b, "?ref=", int64(t.query), amp)
		b = append(b, "lang=en"...)
	}
	return b
}

// appendNum appends before, n in decimal, and after.
func appendNum(b []byte, before string, n int64, after string) []byte {
	b = append(b, before...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, after...)
}

// dirOf returns the directory part of t's path when relative references to
// it are generated ("/", "/p/", ...); "" when only absolute and root-relative
// forms are used.
func dirOf(t target) string {
	switch t.kind {
	case kPage:
		if t.id == 0 {
			return "" // the home page is always written "/" or absolute
		}
		return numbered[kPage].dir
	case kPrivate, kImg, kJS, kCSS:
		return numbered[t.kind].dir
	case kSearch:
		return "/"
	}
	return ""
}

// parseTarget maps a request path (and raw query) of a generated or trap
// host to a target; ok is false for paths the web does not contain. Only
// the canonical spelling of each path is accepted, so URLs and targets
// correspond one to one.
func parseTarget(path, rawQuery string, trap bool) (t target, ok bool) {
	if rawQuery != "" {
		// Only the query variants the generator writes exist as such; any
		// other query is ignored (the page is served as without it).
		if q, ok := parseQuery(rawQuery); ok {
			t.query = q
		}
	}
	if trap {
		switch {
		case path == "/":
			t.kind = kPage
			return t, true
		case strings.HasPrefix(path, "/cal/"):
			rest := path[len("/cal/"):]
			ys, ms, found := strings.Cut(rest, "/")
			if !found || len(ys) < 4 || len(ms) != 2 || (len(ys) > 4 && ys[0] == '0') || !digits(ys) || !digits(ms) {
				return t, false
			}
			y, err1 := strconv.ParseInt(ys, 10, 64)
			m, err2 := strconv.ParseInt(ms, 10, 64)
			if err1 != nil || err2 != nil || y < 1 || y > 1<<40 || m < 1 || m > 12 {
				return t, false
			}
			t.kind, t.id = kCal, y*12+m-1
			return t, true
		case strings.HasPrefix(path, "/a/"):
			rest := path[1:]
			if len(rest)%2 != 0 {
				return t, false
			}
			for i := 0; i < len(rest); i += 2 {
				if rest[i] != 'a' || rest[i+1] != '/' {
					return t, false
				}
			}
			t.kind, t.id = kDeep, int64(len(rest)/2)
			return t, true
		}
		return t, false
	}
	switch path {
	case "/":
		t.kind = kPage
		return t, true
	case "/search":
		t.kind = kSearch
		return t, true
	case "/robots.txt":
		t.kind = kRobots
		return t, true
	}
	for kind, p := range numbered {
		if !strings.HasPrefix(path, p.dir) || !strings.HasSuffix(path, p.ext) {
			continue
		}
		num := path[len(p.dir) : len(path)-len(p.ext)]
		if num == "" || len(num) > 12 || !digits(num) || (num[0] == '0' && (len(num) > 1 || uint8(kind) == kPage)) {
			return t, false
		}
		id, err := strconv.ParseInt(num, 10, 64)
		if err != nil || id < 0 {
			return t, false
		}
		t.kind, t.id = uint8(kind), id
		return t, true
	}
	return t, false
}

// digits reports whether s is all ASCII digits (strconv also takes signs).
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseQuery(q string) (uint8, bool) {
	rest, ok := strings.CutPrefix(q, "ref=")
	if !ok {
		return 0, false
	}
	n, ok := strings.CutSuffix(rest, "&lang=en")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(n)
	if err != nil || !digits(n) || v < 1 || v > 255 || strconv.Itoa(v) != n {
		return 0, false
	}
	return uint8(v), true
}

// hostOnly strips an optional port from a Host header value and lowercases
// it.
func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// isRootHost reports whether a Host header addresses the server itself (an
// IP address, localhost or nothing) rather than a virtual host.
func isRootHost(h string) bool {
	h = strings.Trim(h, "[]")
	return h == "" || h == "localhost" || net.ParseIP(h) != nil
}

// splitURL parses an absolute http URL into host and target-relevant parts.
func splitURL(u string) (host, path, rawQuery string, ok bool) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", "", "", false
	}
	path = p.EscapedPath()
	if path == "" {
		path = "/"
	}
	return hostOnly(p.Host), path, p.RawQuery, true
}
