package fetch

import (
	"errors"
	"testing"
)

// TestResolveAddrPerPort: an entry with a port applies to that port only,
// looked up as host:port, *:port, host, * (curl --resolve).
func TestResolveAddrPerPort(t *testing.T) {
	// The map ParseResolve makes of --resolve a.test:10.0.0.1,
	// *:10.0.0.2:99, b.test:443:127.0.0.1:1, c.test:443:127.0.0.1:8443 and
	// *:8443:10.0.0.3.
	m := map[string]string{
		"a.test":     "10.0.0.1",
		"*":          "10.0.0.2:99",
		"b.test:443": "127.0.0.1:1",    // b.test's https origin is dead
		"c.test:443": "127.0.0.1:8443", // c.test's https goes to the TLS server
		"*:8443":     "10.0.0.3",
	}
	for _, tc := range []struct{ in, want string }{
		{"a.test:8080", "10.0.0.1:8080"},
		{"A.Test:443", "10.0.0.1:443"},
		{"b.test:80", "10.0.0.2:99"},
		{"b.test:443", "127.0.0.1:1"},
		{"c.test:443", "127.0.0.1:8443"},
		{"c.test:80", "10.0.0.2:99"},
		{"a.test:8443", "10.0.0.3:8443"}, // *:port before host
		{"d.test:8443", "10.0.0.3:8443"},
		{"d.test:444", "10.0.0.2:99"},
	} {
		if got := resolveAddr(m, tc.in); got != tc.want {
			t.Errorf("resolveAddr(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := resolveAddr(map[string]string{"b.test:443": "127.0.0.1:1"}, "b.test:80"); got != "b.test:80" {
		t.Errorf("an entry for port 443 maps port 80 to %s", got)
	}
	// ip-mode politeness keys: one per host, whatever the port.
	for _, tc := range []struct {
		m    map[string]string
		host string
		want string
		ok   bool
	}{
		{m, "a.test", "10.0.0.1", true},
		{m, "b.test", "127.0.0.1:1", true},
		{m, "x.test", "10.0.0.2:99", true},
		{map[string]string{"b.test:8443": "10.0.0.9", "b.test:443": "10.0.0.8", "*:80": "10.0.0.7"}, "b.test", "10.0.0.8", true},
		{map[string]string{"*:8443": "10.0.0.9", "*:443": "10.0.0.8"}, "z.test", "10.0.0.8", true},
		{map[string]string{"b.test:443": "10.0.0.8"}, "z.test", "", false},
	} {
		if got, ok := ResolveHost(tc.m, tc.host); got != tc.want || ok != tc.ok {
			t.Errorf("ResolveHost(%v, %s) = %s, %v", tc.m, tc.host, got, ok)
		}
	}
}

func TestParseResolve(t *testing.T) {
	for _, tc := range []struct{ in, key, addr string }{
		{"example.com:127.0.0.1:8080", "example.com", "127.0.0.1:8080"},
		{"*:10.0.0.1", "*", "10.0.0.1"},
		{"Example.COM:80:127.0.0.1", "example.com:80", "127.0.0.1"},
		{"a.test:443:127.0.0.1:8443", "a.test:443", "127.0.0.1:8443"},
		{"*:0443:127.0.0.1:1", "*:443", "127.0.0.1:1"},
		{"a.test:8080:localhost", "a.test:8080", "localhost"},
		{"a.test:[::1]:81", "a.test", "[::1]:81"},
		{"a.test:81:[::1]", "a.test:81", "[::1]"},
	} {
		k, a, err := ParseResolve(tc.in)
		if err != nil || k != tc.key || a != tc.addr {
			t.Errorf("ParseResolve(%q) = %q, %q, %v; want %q, %q", tc.in, k, a, err, tc.key, tc.addr)
		}
	}
	for _, bad := range []string{"", "example.com", "example.com:", ":1.2.3.4", "example.com:8080", "a:b:c:d",
		"a.test:0:127.0.0.1", "a.test:65536:127.0.0.1", "a.test:80:", "a.test:80:8080", "[::1]:127.0.0.1"} {
		if _, _, err := ParseResolve(bad); !errors.Is(err, ErrResolve) {
			t.Errorf("ParseResolve(%q) accepted", bad)
		}
	}
}
