package fetch

import (
	"crypto/tls"
	"time"
)

// ClientConfig is what [NewClient] builds a client from. The recorder
// builds it from its crawl configuration.
type ClientConfig struct {
	// Timeout bounds one request: connect (at most 10s of it), headers
	// and body.
	Timeout time.Duration
	// Workers is the number of workers sharing the client: the idle
	// connection pool holds max(100, 2*Workers) connections.
	Workers int
	// AllowPrivate lets the client dial private, loopback, link-local,
	// multicast and unspecified addresses; without it such a dial fails
	// with [ErrPrivateAddress].
	AllowPrivate bool
	// Resolve maps dial addresses as curl's --resolve does (see
	// [ResolveHost] for the forms of its keys); it is read, not copied,
	// and must not change while the client is in use.
	Resolve map[string]string
	// DialAddr, when set, gives the address to dial for a host:port that
	// Resolve does not map (the address of the host's politeness key in
	// ip mode); it returns its argument to leave it as it is. It must be
	// safe for concurrent use.
	DialAddr func(addr string) string
	// DialHook, when set, is called with every address dialled (tests).
	DialHook func(addr string)
	// TLS is the client's TLS configuration (see [ClientTLS]); nil for
	// Go's defaults.
	TLS *tls.Config
}
