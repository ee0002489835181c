package fetch

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ErrResolve marks a --resolve entry that does not parse.
var ErrResolve = errors.New("fetch: bad --resolve entry")

// ParseResolve parses one curl-style --resolve entry into a [ClientConfig.Resolve]
// key and dial address. "HOST:ADDR" maps every port of HOST (key "HOST");
// "HOST:PORT:ADDR", curl's own form, maps only connections to PORT (key
// "HOST:PORT"), so a host's http and https origins can go to different
// places. HOST may be "*" (every host). ADDR is an IP or host name with an
// optional port (without one the connection keeps the URL's port); IPv6
// addresses go in brackets.
func ParseResolve(s string) (key, addr string, err error) {
	i := strings.IndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("%w %q: want HOST:ADDR or HOST:PORT:ADDR (e.g. *:127.0.0.1:8080 or example.com:443:127.0.0.1:8443)", ErrResolve, s)
	}
	host, addr := strings.ToLower(s[:i]), s[i+1:]
	if strings.ContainsAny(host, "/ []") {
		return "", "", fmt.Errorf("%w %q: bad host %q", ErrResolve, s, host)
	}
	key = host
	// curl form HOST:PORT:ADDR: a purely numeric first field of addr
	// followed by more is curl's port (an ADDR never starts so: an IPv4
	// address has dots before its colon, an IPv6 one brackets).
	if j := strings.IndexByte(addr, ':'); j > 0 && isDigits(addr[:j]) && j < len(addr)-1 {
		if p, err := strconv.Atoi(addr[:j]); err != nil || p < 1 || p > 65535 {
			return "", "", fmt.Errorf("%w %q: bad port %q", ErrResolve, s, addr[:j])
		}
		key, addr = host+":"+strings.TrimLeft(addr[:j], "0"), addr[j+1:]
	}
	h, port, e := net.SplitHostPort(addr)
	if e != nil {
		h, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), ""
	}
	if h == "" || isDigits(h) || (port != "" && !isDigits(port)) || (net.ParseIP(h) == nil && strings.ContainsAny(h, ":/ []")) {
		return "", "", fmt.Errorf("%w %q: bad address %q (want IP or IP:PORT)", ErrResolve, s, addr)
	}
	return key, addr, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
