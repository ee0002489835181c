package politeness

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// TestKeysIP: in ip mode a host's key is "ip:" and its smallest address
// (unmapped), from --resolve before DNS; a name that does not resolve
// keeps its own key; a nil Keys keys by host.
func TestKeysIP(t *testing.T) {
	keys := NewKeys(Options{ByIP: true, Resolve: map[string]string{"x.test": "10.0.0.1:80"},
		Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
			switch host {
			case "y.test", "z.test":
				return []netip.Addr{netip.MustParseAddr("192.0.2.9"), netip.MustParseAddr("::ffff:192.0.2.7")}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		}})
	for u, want := range map[string]string{
		"http://x.test/":       "ip:10.0.0.1",
		"https://y.test:8443/": "ip:192.0.2.7",
		"http://z.test/":       "ip:192.0.2.7",
		"http://[::1]:8080/":   "ip:::1",
		"http://nx.test/":      "nx.test",
		"http://u@X.test/":     "ip:10.0.0.1",
	} {
		if got := keys.Key(u); got != want {
			t.Errorf("ip key of %s = %q, want %q", u, got, want)
		}
	}
	if got := (*Keys)(nil).Key("https://User@Host.test:8443/p"); got != "host.test" {
		t.Errorf("host key %q", got)
	}
}

// TestKeysCachedAndDialAddr: a key needing DNS is not known until it is
// looked up, once per host; after that the dialer is sent to its address,
// on the port asked. In host mode every key is known and no address is
// changed.
func TestKeysCachedAndDialAddr(t *testing.T) {
	var lookups atomic.Int64
	keys := NewKeys(Options{ByIP: true, Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		return []netip.Addr{netip.MustParseAddr("192.0.2.5")}, nil
	}})
	if key, ok := keys.Cached("http://192.0.2.1:8080/a"); !ok || key != "ip:192.0.2.1" {
		t.Errorf("an address host: %q, %v", key, ok)
	}
	if key, ok := keys.Cached("http://a.test/"); ok {
		t.Errorf("a.test known before its lookup: %q", key)
	}
	if got := keys.DialAddr("a.test:443"); got != "a.test:443" {
		t.Errorf("dial address before the lookup: %s", got)
	}
	if got := keys.Key("http://a.test/x"); got != "ip:192.0.2.5" {
		t.Errorf("key %q", got)
	}
	if key, ok := keys.Cached("https://a.test:8443/y"); !ok || key != "ip:192.0.2.5" {
		t.Errorf("a.test after its lookup: %q, %v", key, ok)
	}
	keys.Key("http://a.test/z")
	if n := lookups.Load(); n != 1 {
		t.Errorf("%d lookups of one host", n)
	}
	for addr, want := range map[string]string{"a.test:443": "192.0.2.5:443", "A.Test:80": "192.0.2.5:80", "b.test:80": "b.test:80", "no-port": "no-port"} {
		if got := keys.DialAddr(addr); got != want {
			t.Errorf("dial address of %s: %s, want %s", addr, got, want)
		}
	}

	host := NewKeys(Options{Lookup: func(context.Context, string) ([]netip.Addr, error) {
		t.Error("a lookup in host mode")
		return nil, nil
	}})
	if key, ok := host.Cached("https://A.test:8443/p"); !ok || key != "a.test" {
		t.Errorf("host mode: %q, %v", key, ok)
	}
	if got := host.DialAddr("a.test:443"); got != "a.test:443" {
		t.Errorf("host mode dial address %s", got)
	}
}

func TestOriginHost(t *testing.T) {
	for u, want := range map[string][2]string{
		"http://a.test/x?y":          {"http://a.test", "a.test"},
		"https://a.test:8443/":       {"https://a.test:8443", "a.test"},
		"http://[::1]:8080/p":        {"http://[::1]:8080", "::1"},
		"http://a.test?q":            {"http://a.test", "a.test"},
		"http://u@B.test#f":          {"http://u@B.test", "b.test"},
		"http://a.test":              {"http://a.test", "a.test"},
		"mailto:someone@example.com": {"mailto:someone@example.com", ""},
	} {
		if o, h := Origin(u), Host(u); o != want[0] || h != want[1] {
			t.Errorf("%s: origin %q, host %q; want %q, %q", u, o, h, want[0], want[1])
		}
	}
}

// TestDelay: Mercator's rule, Factor times the request's time, between
// Min (or the Crawl-delay, when longer) and Max (or Min, when Max is
// below it).
func TestDelay(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		rule              Delay
		took, crawl, want time.Duration
	}{
		{Delay{Factor: 10, Min: 0, Max: time.Minute}, 100 * ms, 0, time.Second},
		{Delay{Factor: 10, Min: 2 * time.Second, Max: time.Minute}, 100 * ms, 0, 2 * time.Second},
		{Delay{Factor: 10, Min: 0, Max: time.Minute}, 100 * ms, 5 * time.Second, 5 * time.Second},
		{Delay{Factor: 10, Min: 0, Max: 3 * time.Second}, 100 * ms, 5 * time.Second, 3 * time.Second},
		{Delay{Factor: 10, Min: 0, Max: 500 * ms}, 100 * ms, 0, 500 * ms},
		{Delay{Factor: 10, Min: time.Second, Max: 500 * ms}, 300 * ms, 0, time.Second},
		{Delay{Factor: 0.5, Min: 10 * ms, Max: time.Minute}, 100 * ms, 0, 50 * ms},
		{Delay{}, time.Second, time.Second, 0},
	} {
		if got := tc.rule.Wait(tc.took, tc.crawl); got != tc.want {
			t.Errorf("%+v after %v with Crawl-delay %v: %v, want %v", tc.rule, tc.took, tc.crawl, got, tc.want)
		}
	}
}

// TestRetryAfter: Retry-After's two forms, RFC 9110's own examples among
// them, and what is not one.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 27, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		wait time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true}, // RFC 9110 10.2.3
		{"Wed, 21 Oct 2015 07:28:00 GMT", time.Minute, true},
		{" 8 ", 8 * time.Second, true},
		{"0", 0, true},
		{"Wednesday, 21-Oct-15 07:27:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Wed Oct 21 07:27:05 2015", 5 * time.Second, true},           // asctime
		{"Tue, 20 Oct 2015 07:28:00 GMT", 0, true},                    // past
		{"99999999999999999999", 1<<63 - 1, true},
		{"9999999999", 1<<63 - 1, true},
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	} {
		wait, ok := RetryAfter(c.v, now)
		if wait != c.wait || ok != c.ok {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", c.v, wait, ok, c.wait, c.ok)
		}
	}
}
