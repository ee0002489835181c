package partition

import (
	"github.com/cespare/xxhash/v2"
	"golang.org/x/net/publicsuffix"
)

// Domain partitions by registrable domain (eTLD+1), so that all subdomains
// of a site share a node: node = XXH64(DomainOf(u)) mod N. It is a value
// type, safe for concurrent use.
type Domain struct {
	N int // number of nodes, at least 1
}

var _ Partitioner = Domain{}

// Node returns the node of u's registrable domain.
func (d Domain) Node(u string) int { return int(xxhash.Sum64String(DomainOf(u)) % uint64(d.N)) }

// Nodes returns N.
func (d Domain) Nodes() int { return d.N }

// Name returns "domain".
func (Domain) Name() string { return "domain" }

// DomainOf returns the key of the "domain" partitioner: the registrable
// domain of u's host name, or HostOf(u) when the host is an IP address or
// has no registrable domain.
func DomainOf(u string) string {
	h := HostOf(u)
	if h == "" || h[0] == '[' || isNumericLabel(lastLabel(h)) {
		return h // IPv6 or IPv4 literal
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}

func lastLabel(h string) string {
	if len(h) > 0 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i] == '.' {
			return h[i+1:]
		}
	}
	return h
}

func isNumericLabel(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
