package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// ClientTLS is the fetch client's TLS configuration for the crawl's
// CAFile (caFile) and test hook (base, not modified): base's,
// with the certificates of CAFile added to its roots (the system's when
// it has none). Nil when neither is set (Go's defaults). A CAFile that
// cannot be read, holds no PEM certificate or a block that is not a valid
// certificate is an error naming it, in one line.
func ClientTLS(caFile string, base *tls.Config) (*tls.Config, error) {
	if caFile == "" {
		return base, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA file: %v", err)
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
			return nil, fmt.Errorf("CA file %s: certificate %d: %v", caFile, len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", caFile)
	}
	t := &tls.Config{}
	if base != nil {
		t = base.Clone()
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
