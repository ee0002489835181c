package politeness

import (
	"context"
	"net/netip"
)

// Options is what [NewKeys] builds the keys from. The recorder builds it
// from its crawl configuration.
type Options struct {
	// ByIP keys a URL by the address its host resolves to (ip mode:
	// virtual hosts sharing a server share its politeness); otherwise by
	// its host name (every origin of a host shares one key).
	ByIP bool
	// Resolve is the crawl's --resolve map (see [fetch.ResolveHost]),
	// consulted before DNS in ip mode. It is read, not copied.
	Resolve map[string]string
	// Lookup, when set, replaces DNS for ip-mode keys (tests). It must be
	// safe for concurrent use.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}
