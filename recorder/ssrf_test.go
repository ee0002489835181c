package recorder

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

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
