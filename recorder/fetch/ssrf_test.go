package fetch

import (
	"net/netip"
	"testing"
)

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

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

func TestForbiddenIP(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.1.1", "::1", "fe80::1", "224.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1", "100.64.0.1"} {
		if !forbiddenIP(mustAddr(s)) {
			t.Errorf("%s allowed", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "2001:4860:4860::8888", "93.184.216.34"} {
		if forbiddenIP(mustAddr(s)) {
			t.Errorf("%s refused", s)
		}
	}
}
