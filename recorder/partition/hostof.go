package partition

import "strings"

// HostOf returns the host name of u, the key the host splitter assigns by:
// lower-cased, without user info, port or trailing dot; an IPv6 literal
// keeps its brackets. A server is one host whatever its port, so
// http://a.com/ and http://a.com:8080/ go to one node, where one
// politeness queue holds both. It is the recorder's one host extractor:
// politeness keys, the URL filter's scope and the scenarios' host counts
// use it too. For a normalized URL it returns a substring of u and does
// not allocate. A string without "://" yields "".
func HostOf(u string) string {
	var a string
	switch {
	case len(u) >= 7 && u[:7] == "http://":
		a = u[7:]
	case len(u) >= 8 && u[:8] == "https://":
		a = u[8:]
	default:
		i := strings.Index(u, "://")
		if i < 0 {
			return ""
		}
		a = u[i+3:]
	}
	end := len(a)
	for j := 0; j < len(a); j++ {
		if c := a[j]; c == '/' || c == '?' || c == '#' || c == '\\' {
			end = j
			break
		}
	}
	a = a[:end]
	if at := strings.LastIndexByte(a, '@'); at >= 0 {
		a = a[at+1:]
	}
	a = strings.TrimSuffix(hostname(a), ".")
	for j := 0; j < len(a); j++ {
		if c := a[j]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(a)
		}
	}
	return a
}

// hostname strips the port from an authority "host[:port]".
func hostname(a string) string {
	if len(a) > 0 && a[0] == '[' {
		if j := strings.IndexByte(a, ']'); j >= 0 {
			return a[:j+1]
		}
		return a
	}
	if j := strings.LastIndexByte(a, ':'); j >= 0 {
		return a[:j]
	}
	return a
}
