package fetch

import (
	"net/netip"
)

// The crawler refuses to connect to an address that is not public
// unicast (unless ClientConfig.AllowPrivate), so that a page on the web cannot
// make it probe the researcher's own network (server-side request
// forgery). The check runs on the address actually dialled, after DNS.
//
// The table is built from the IANA registries, one entry per row (the
// comments name the row and its RFC):
//   - IPv4 Special-Purpose Address Registry,
//     https://www.iana.org/assignments/iana-ipv4-special-registry
//   - IPv6 Special-Purpose Address Registry,
//     https://www.iana.org/assignments/iana-ipv6-special-registry
//   - IPv4 Multicast and IPv6 Address Space registries, for multicast,
//     the deprecated site-local block and the space outside 2000::/3,
//     which holds no global unicast address.
//
// A row is refused unless the registry marks it "globally reachable",
// in which case it is listed with allow set: that is how the registries'
// exceptions inside larger reserved blocks (anycast services inside
// 192.0.0.0/24 and 2001::/23) stay reachable. The most specific row
// containing an address decides.
//
// IPv6 addresses that embed an IPv4 address (IPv4-mapped,
// IPv4-translated, NAT64, 6to4, Teredo) are refused when the embedded
// address is; see [embeddedIPv4].
type ipRow struct {
	prefix netip.Prefix
	allow  bool
}

func row(p string, allow bool) ipRow { return ipRow{netip.MustParsePrefix(p), allow} }

var ipRows = []ipRow{
	// IPv4 Special-Purpose Address Registry.
	row("0.0.0.0/8", false),          // "This network", RFC 791
	row("10.0.0.0/8", false),         // Private-Use, RFC 1918
	row("100.64.0.0/10", false),      // Shared Address Space (CGN), RFC 6598
	row("127.0.0.0/8", false),        // Loopback, RFC 1122
	row("169.254.0.0/16", false),     // Link Local, RFC 3927
	row("172.16.0.0/12", false),      // Private-Use, RFC 1918
	row("192.0.0.0/24", false),       // IETF Protocol Assignments, RFC 6890 (incl. DS-Lite 192.0.0.0/29, NAT64 discovery .170/.171)
	row("192.0.0.9/32", true),        // Port Control Protocol Anycast, RFC 7723 (globally reachable)
	row("192.0.0.10/32", true),       // Traversal Using Relays around NAT Anycast, RFC 8155 (globally reachable)
	row("192.0.2.0/24", false),       // Documentation (TEST-NET-1), RFC 5737
	row("192.31.196.0/24", true),     // AS112-v4, RFC 7535 (globally reachable)
	row("192.52.193.0/24", true),     // AMT, RFC 7450 (globally reachable)
	row("192.88.99.0/24", false),     // Deprecated (6to4 Relay Anycast), RFC 7526
	row("192.168.0.0/16", false),     // Private-Use, RFC 1918
	row("192.175.48.0/24", true),     // Direct Delegation AS112 Service, RFC 7534 (globally reachable)
	row("198.18.0.0/15", false),      // Benchmarking, RFC 2544
	row("198.51.100.0/24", false),    // Documentation (TEST-NET-2), RFC 5737
	row("203.0.113.0/24", false),     // Documentation (TEST-NET-3), RFC 5737
	row("240.0.0.0/4", false),        // Reserved, RFC 1112
	row("255.255.255.255/32", false), // Limited Broadcast, RFC 8190
	// IPv4 Multicast Address Space registry.
	row("224.0.0.0/4", false), // Multicast, RFC 5771

	// IPv6 Address Space registry: only 2000::/3 is global unicast; the
	// rest is reserved, unique-local, link-local, site-local or multicast.
	row("::/0", false),
	row("2000::/3", true), // Global Unicast, RFC 4291
	// IPv6 Special-Purpose Address Registry.
	row("::1/128", false),          // Loopback Address, RFC 4291
	row("::/128", false),           // Unspecified Address, RFC 4291
	row("::ffff:0:0/96", false),    // IPv4-mapped Address, RFC 4291 (unmapped before the check)
	row("64:ff9b::/96", true),      // IPv4-IPv6 Translat. (NAT64), RFC 6052 (globally reachable; embedded IPv4 checked)
	row("64:ff9b:1::/48", false),   // IPv4-IPv6 Translat. (local-use NAT64), RFC 8215
	row("100::/64", false),         // Discard-Only Address Block, RFC 6666
	row("100:0:0:1::/64", false),   // Dummy IPv6 Prefix, RFC 9780
	row("2001::/23", false),        // IETF Protocol Assignments, RFC 2928
	row("2001::/32", true),         // TEREDO, RFC 4380 (embedded IPv4 checked)
	row("2001:1::1/128", true),     // Port Control Protocol Anycast, RFC 7723 (globally reachable)
	row("2001:1::2/128", true),     // Traversal Using Relays around NAT Anycast, RFC 8155 (globally reachable)
	row("2001:1::3/128", true),     // DNS-SD Service Registration Protocol Anycast, RFC 9665 (globally reachable)
	row("2001:2::/48", false),      // Benchmarking, RFC 5180
	row("2001:3::/32", true),       // AMT, RFC 7450 (globally reachable)
	row("2001:4:112::/48", true),   // AS112-v6, RFC 7535 (globally reachable)
	row("2001:20::/28", true),      // ORCHIDv2, RFC 7343 (globally reachable)
	row("2001:30::/28", true),      // Drone Remote ID Protocol Entity Tags (DETs) Prefix, RFC 9374 (globally reachable)
	row("2001:db8::/32", false),    // Documentation, RFC 3849
	row("2002::/16", true),         // 6to4, RFC 3056 (embedded IPv4 checked)
	row("2620:4f:8000::/48", true), // Direct Delegation AS112 Service, RFC 7534 (globally reachable)
	row("3fff::/20", false),        // Documentation, RFC 9637
	row("5f00::/16", false),        // Segment Routing (SRv6) SIDs, RFC 9602
	row("fc00::/7", false),         // Unique-Local, RFC 4193
	row("fe80::/10", false),        // Link-Local Unicast, RFC 4291
	row("fec0::/10", false),        // Site-local (deprecated), RFC 3879
	row("ff00::/8", false),         // Multicast, RFC 4291
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
	// IPv4-translated addresses, ::ffff:0:a.b.c.d (RFC 2765, SIIT).
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	// IPv4-compatible addresses, ::a.b.c.d (deprecated, RFC 4291 2.5.5.1);
	// refused by the table's ::/0 row, checked here for the message.
	compatible = netip.MustParsePrefix("::/96")
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries: the
// last 32 bits of a NAT64 (64:ff9b::/96), IPv4-translated or
// IPv4-compatible address, bits 16-47 of a 6to4 address, and a Teredo
// address's server (bits 32-63) and client (the last 32 bits, inverted).
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() || ip.Is4In6() {
		return nil
	}
	b := ip.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case nat64.Contains(ip), translated.Contains(ip), compatible.Contains(ip):
		return []netip.Addr{last}
	case sixToFour.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	case teredo.Contains(ip):
		return []netip.Addr{
			netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}),
			netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}),
		}
	}
	return nil
}

// forbiddenIP reports whether ip is not a public unicast address: its
// most specific row in the table is not globally reachable, or it embeds
// an IPv4 address that is refused.
func forbiddenIP(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return true
	}
	for _, v4 := range embeddedIPv4(ip) {
		if forbiddenIP(v4) {
			return true
		}
	}
	best, allow := -1, true
	for _, r := range ipRows {
		if r.prefix.Bits() > best && r.prefix.Contains(ip) {
			best, allow = r.prefix.Bits(), r.allow
		}
	}
	return !allow
}
