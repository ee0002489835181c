package recorder

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crawltrace/crawltrace/recorder/partition"
)

// Politeness keys: what one queue, one request in flight and one delay
// apply to ([Config.PolitenessKey]).
const (
	// PolitenessHost groups every origin of a host name (http://h/,
	// https://h/, http://h:8080/): the default.
	PolitenessHost = "host"
	// PolitenessIP groups every host name that resolves to one IP address
	// (Heritrix's "ip" queue assignment), so virtual hosts sharing a
	// server share its politeness.
	PolitenessIP = "ip"
)

// originOf returns scheme://authority of an absolute URL: the unit
// robots.txt applies to.
func originOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	j := strings.IndexAny(u[i+3:], "/?#")
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}

// hostOf returns the host of an absolute URL as the host splitter sees it
// (partition.HostOf), without the brackets of an IPv6 literal, which DNS
// and netip want bare.
func hostOf(u string) string {
	h := partition.HostOf(u)
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

// politenessKeys maps URLs to politeness keys. In ip mode a host name is
// resolved once (through Config.Resolve first, then DNS) and cached; a
// name that does not resolve keeps its own key. It is safe for
// concurrent use.
type politenessKeys struct {
	mode    string
	resolve map[string]string
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	mu      sync.Mutex
	cache   map[string]string
}

func newPolitenessKeys(cfg *Config) *politenessKeys {
	return &politenessKeys{mode: cfg.PolitenessKey, resolve: cfg.Resolve, cache: make(map[string]string),
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}}
}

// key returns u's politeness key: its host, or in ip mode "ip:" and the
// host's smallest resolved address.
func (k *politenessKeys) key(u string) string {
	host := hostOf(u)
	if k == nil || k.mode != PolitenessIP {
		return host
	}
	k.mu.Lock()
	key, ok := k.cache[host]
	k.mu.Unlock()
	if ok {
		return key
	}
	key = k.resolveKey(host)
	k.mu.Lock()
	k.cache[host] = key
	k.mu.Unlock()
	return key
}

func (k *politenessKeys) resolveKey(host string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		return "ip:" + a.Unmap().String()
	}
	name := host
	if to := resolveAddr(k.resolve, net.JoinHostPort(host, "0")); to != net.JoinHostPort(host, "0") {
		if h, _, err := net.SplitHostPort(to); err == nil {
			if a, err := netip.ParseAddr(h); err == nil {
				return "ip:" + a.Unmap().String()
			}
			name = h
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := k.lookup(ctx, name)
	if err != nil || len(addrs) == 0 {
		return host
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	return "ip:" + addrs[0].String()
}
