package recorder

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// clientTLS is the fetch client's TLS configuration: the test hook's,
// with the certificates of CAFile added to its roots (the system's when
// it has none). Nil when neither is set (Go's defaults). A CAFile that
// cannot be read, holds no PEM certificate or a block that is not a valid
// certificate is an [ErrConfig] naming it.
func (c *Config) clientTLS() (*tls.Config, error) {
	if c.CAFile == "" {
		return c.tlsConfig, nil
	}
	b, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("%w: CA file: %v", ErrConfig, err)
	}
	var certs []*x509.Certificate
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file %s: certificate %d: %v", ErrConfig, c.CAFile, len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: CA file %s: no PEM certificate in it", ErrConfig, c.CAFile)
	}
	t := &tls.Config{}
	if c.tlsConfig != nil {
		t = c.tlsConfig.Clone()
	}
	if t.RootCAs == nil {
		// The system roots, when they can be loaded; the file's
		// certificates alone otherwise.
		if t.RootCAs, err = x509.SystemCertPool(); err != nil {
			t.RootCAs = x509.NewCertPool()
		}
	} else {
		t.RootCAs = t.RootCAs.Clone()
	}
	for _, cert := range certs {
		t.RootCAs.AddCert(cert)
	}
	return t, nil
}
