package recorder

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/politeness"
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

// newPolitenessKeys is the crawl's politeness keys: by IP address in ip
// mode, through cfg.Resolve and then DNS (or the lookup test hook).
func newPolitenessKeys(cfg *Config) *politeness.Keys {
	return politeness.NewKeys(politeness.Options{ByIP: cfg.PolitenessKey == PolitenessIP, Resolve: cfg.Resolve, Lookup: cfg.lookup})
}

// delayOf is the crawl's delay rule.
func delayOf(cfg *Config) politeness.Delay {
	return politeness.Delay{Factor: cfg.DelayFactor, Min: cfg.MinDelay, Max: cfg.MaxDelay}
}

// ErrPrivateAddress is returned (wrapped) by a dial to an address the
// crawler refuses without [Config.AllowPrivate]: [fetch.ErrPrivateAddress].
var ErrPrivateAddress = fetch.ErrPrivateAddress

// clientConfig is the fetch client's configuration for cfg, dialling the
// address of a host's politeness key (ip mode) when cfg.Resolve does not
// map it. cfg.tlsConfig is the client's TLS configuration (clientTLS).
func clientConfig(cfg *Config, keys *politeness.Keys) fetch.ClientConfig {
	return fetch.ClientConfig{
		Timeout:      cfg.Timeout,
		Workers:      cfg.Workers,
		AllowPrivate: cfg.AllowPrivate,
		Resolve:      cfg.Resolve,
		DialAddr:     keys.DialAddr,
		DialHook:     cfg.dialHook,
		TLS:          cfg.tlsConfig,
	}
}

// newHTTPClient builds the crawl's fetch client (fetch.NewClient).
func newHTTPClient(cfg *Config, keys *politeness.Keys) *http.Client {
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
