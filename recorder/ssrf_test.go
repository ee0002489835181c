package recorder

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestForbiddenIPRegistries(t *testing.T) {
	refused := []string{
		// NAT64 with an embedded loopback or private IPv4.
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::c0a8:101",
		// Local-use NAT64 (RFC 8215), whatever it embeds.
		"64:ff9b:1::7f00:1", "64:ff9b:1::808:808",
		// 6to4 with an embedded private or loopback IPv4.
		"2002:a00:1::1", "2002:7f00:1::", "2002:c0a8:101::1",
		// Teredo whose client (inverted) is loopback: ^127.0.0.1 = 80ff:fffe.
		"2001:0:808:808::80ff:fffe",
		// IPv4-compatible and IPv4-translated.
		"::7f00:1", "::a00:1", "::808:808", "::ffff:0:7f00:1",
		// IPv4 special-purpose rows.
		"198.18.0.1", "198.19.255.255", "240.0.0.1", "255.255.255.254", "192.0.0.1", "192.0.0.170",
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "192.88.99.1", "0.1.2.3", "100.127.255.255",
		// IPv6 special-purpose and address-space rows.
		"fec0::1", "fc00::1", "fd12::1", "100::1", "2001:db8::1", "2001:2::1", "3fff::1", "5f00::1",
		"ff02::1", "2001:10::1", "4000::1",
		// Mapped forms and zones.
		"::ffff:10.0.0.1", "fe80::1%eth0",
	}
	for _, s := range refused {
		if !forbiddenIP(mustAddr(s)) {
			t.Errorf("%s allowed", s)
		}
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34", "2001:4860:4860::8888", "2606:4700::1111",
		"64:ff9b::808:808",          // NAT64 of a public address
		"2002:808:808::1",           // 6to4 of a public address
		"2001:0:808:808::f7f7:f7f7", // Teredo, server and client 8.8.8.8
		"192.0.0.9", "192.31.196.1", "192.175.48.1", "2001:1::1", "2001:4:112::1", "2620:4f:8000::1",
	}
	for _, s := range allowed {
		if forbiddenIP(mustAddr(s)) {
			t.Errorf("%s refused", s)
		}
	}
}

// TestRefuseEmbeddedIPv4 dials real addresses: a name resolved to a NAT64,
// IPv4-compatible or 6to4 form of a loopback server is refused before any
// connection is made, and the page log says so.
func TestRefuseEmbeddedIPv4(t *testing.T) {
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": linkPage()})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, ip := range []string{"64:ff9b::7f00:1", "::7f00:1", "2002:7f00:1::1", "::ffff:127.0.0.1", "198.18.0.1"} {
		cfg := localConfig(t, net.JoinHostPort(ip, port), "http://a.test/")
		cfg.AllowPrivate = false
		res := runCrawl(t, cfg)
		if res.Stats.RobotsRetries != 0 {
			t.Errorf("%s: a refused address was retried %d times", ip, res.Stats.RobotsRetries)
		}
		pages := readPages(t, cfg.OutDir, 0)
		if len(pages) == 0 || !strings.Contains(pages[0].Error, "refusing") {
			t.Errorf("%s: page log %+v, want a refused robots.txt fetch", ip, pages)
		}
	}
	if n := len(v.got()); n != 0 {
		t.Fatalf("server saw %d requests", n)
	}
}
