package recorder

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/crawltrace/crawltrace/recorder/fetch"
)

// ErrPrivateAddress is returned (wrapped) by a dial to an address the
// crawler refuses without [Config.AllowPrivate]: [fetch.ErrPrivateAddress].
var ErrPrivateAddress = fetch.ErrPrivateAddress

// clientConfig is the fetch client's configuration for cfg, dialling the
// address of a host's politeness key (ip mode) when cfg.Resolve does not
// map it. cfg.tlsConfig is the client's TLS configuration (clientTLS).
func clientConfig(cfg *Config, keys *politenessKeys) fetch.ClientConfig {
	return fetch.ClientConfig{
		Timeout:      cfg.Timeout,
		Workers:      cfg.Workers,
		AllowPrivate: cfg.AllowPrivate,
		Resolve:      cfg.Resolve,
		DialAddr:     keys.dialAddr,
		DialHook:     cfg.dialHook,
		TLS:          cfg.tlsConfig,
	}
}

// newHTTPClient builds the crawl's fetch client (fetch.NewClient).
func newHTTPClient(cfg *Config, keys *politenessKeys) *http.Client {
	return fetch.NewClient(clientConfig(cfg, keys))
}

// clientTLS is the fetch client's TLS configuration: the test hook's,
// with the certificates of CAFile added (fetch.ClientTLS). A bad CAFile
// is an [ErrConfig] naming it.
func (c *Config) clientTLS() (*tls.Config, error) {
	t, err := fetch.ClientTLS(c.CAFile, c.tlsConfig)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return t, nil
}
