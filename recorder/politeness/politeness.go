package politeness

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

// Origin returns scheme://authority of an absolute URL: the unit
// robots.txt applies to.
func Origin(u string) string {
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

// Host returns the host of an absolute URL as the host splitter sees it
// (partition.HostOf), without the brackets of an IPv6 literal, which DNS
// and netip want bare.
func Host(u string) string {
	h := partition.HostOf(u)
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

// Keys maps URLs to politeness keys. In ip mode a host name is resolved
// once (through Options.Resolve first, then DNS) and cached; a name that
// does not resolve keeps its own key. It is safe for concurrent use; a
// nil *Keys keys every URL by its host.
type Keys struct {
	byIP    bool
	resolve map[string]string
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	mu      sync.Mutex
	cache   map[string]string
}

// NewKeys returns the politeness keys of o.
func NewKeys(o Options) *Keys {
	lookup := o.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return &Keys{byIP: o.ByIP, resolve: o.Resolve, cache: make(map[string]string), lookup: lookup}
}

// Cached returns u's politeness key when it is known without a DNS
// lookup: always in host mode; in ip mode when the host is an address,
// mapped by Options.Resolve to one, or looked up before.
func (k *Keys) Cached(u string) (string, bool) {
	host := Host(u)
	if k == nil || !k.byIP {
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

func (k *Keys) store(host, key string) {
	k.mu.Lock()
	k.cache[host] = key
	k.mu.Unlock()
}

// DialAddr is the address to dial for addr (host:port) in ip mode: the
// address of the host's politeness key, so that requests go to the
// server whose queue they wait in (the dialer would pick its own among
// the host's addresses). It is addr when the key is not an address or
// not known yet. It is the fetch client's [fetch.ClientConfig.DialAddr].
func (k *Keys) DialAddr(addr string) string {
	if k == nil || !k.byIP {
		return addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	k.mu.Lock()
	key, ok := k.cache[Host("http://"+addr)] // the cache's keys are Host's
	k.mu.Unlock()
	if ip, isIP := strings.CutPrefix(key, "ip:"); ok && isIP {
		return net.JoinHostPort(ip, port)
	}
	return addr
}

// Key returns u's politeness key: its host, or in ip mode "ip:" and the
// host's smallest resolved address (the host itself when it does not
// resolve). It may wait for DNS (up to 5 seconds).
func (k *Keys) Key(u string) string {
	if key, ok := k.Cached(u); ok {
		return key
	}
	host := Host(u)
	_, name := k.withoutDNS(host)
	key := k.lookupKey(host, name)
	k.store(host, key)
	return key
}

// withoutDNS is host's key in ip mode when no lookup is needed (the host
// is an address, or Options.Resolve maps it to one: the entry
// fetch.ResolveHost picks for the host as a whole, its per-port entries
// included); otherwise "" and the name to look up (the host, or the name
// Options.Resolve maps it to).
func (k *Keys) withoutDNS(host string) (key, name string) {
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
func (k *Keys) lookupKey(host, name string) string {
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
