package recorder

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
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
	lookup := cfg.lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return &politenessKeys{mode: cfg.PolitenessKey, resolve: cfg.Resolve, cache: make(map[string]string), lookup: lookup}
}

// cached returns u's politeness key when it is known without a DNS
// lookup: always in host mode; in ip mode when the host is an address,
// mapped by Config.Resolve to one, or looked up before.
func (k *politenessKeys) cached(u string) (string, bool) {
	host := hostOf(u)
	if k == nil || k.mode != PolitenessIP {
		return host, true
	}
	k.mu.Lock()
	key, ok := k.cache[host]
	k.mu.Unlock()
	if ok {
		return key, true
	}
	if key, _ = k.withoutDNS(host); key != "" {
		k.store(host, key)
		return key, true
	}
	return "", false
}

func (k *politenessKeys) store(host, key string) {
	k.mu.Lock()
	k.cache[host] = key
	k.mu.Unlock()
}

// dialAddr is the address to dial for addr (host:port) in ip mode: the
// address of the host's politeness key, so that requests go to the
// server whose queue they wait in (the dialer would pick its own among
// the host's addresses). It is addr when the key is not an address or
// not known yet.
func (k *politenessKeys) dialAddr(addr string) string {
	if k == nil || k.mode != PolitenessIP {
		return addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	k.mu.Lock()
	key, ok := k.cache[hostOf("http://"+addr)] // the cache's keys are hostOf's
	k.mu.Unlock()
	if ip, isIP := strings.CutPrefix(key, "ip:"); ok && isIP {
		return net.JoinHostPort(ip, port)
	}
	return addr
}

// key returns u's politeness key: its host, or in ip mode "ip:" and the
// host's smallest resolved address (the host itself when it does not
// resolve). It may wait for DNS.
func (k *politenessKeys) key(u string) string {
	if key, ok := k.cached(u); ok {
		return key
	}
	host := hostOf(u)
	_, name := k.withoutDNS(host)
	key := k.lookupKey(host, name)
	k.store(host, key)
	return key
}

// withoutDNS is host's key in ip mode when no lookup is needed (the host
// is an address, or Config.Resolve maps it to one: the entry resolveHost
// picks for the host as a whole, its per-port entries included);
// otherwise "" and the name to look up (the host, or the name
// Config.Resolve maps it to).
func (k *politenessKeys) withoutDNS(host string) (key, name string) {
	if a, err := netip.ParseAddr(host); err == nil {
		return "ip:" + a.Unmap().String(), ""
	}
	if to, ok := fetch.ResolveHost(k.resolve, host); ok {
		h, _, err := net.SplitHostPort(to)
		if err != nil {
			h = strings.TrimSuffix(strings.TrimPrefix(to, "["), "]")
		}
		if a, err := netip.ParseAddr(h); err == nil {
			return "ip:" + a.Unmap().String(), ""
		}
		return "", h
	}
	return "", host
}

// lookupKey looks name up for host's key.
func (k *politenessKeys) lookupKey(host, name string) string {
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
