package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestClientTLS: the certificates of a CA file are added to the base
// configuration's roots (a copy: the base is left alone), a bundle's
// other blocks skipped; no CA file is the base itself; a file missing,
// without a certificate or with a broken one is a one-line error naming
// it.
func TestClientTLS(t *testing.T) {
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	dir := t.TempDir()
	write := func(name, body string) string { return crawltest.WriteFile(t, dir, name, body) }
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	ca := write("ca.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"+cert)

	verify := func(c *tls.Config) error {
		_, err := srv.Certificate().Verify(x509.VerifyOptions{Roots: c.RootCAs, DNSName: "example.com"})
		return err
	}
	base := &tls.Config{ServerName: "example.com", RootCAs: x509.NewCertPool()}
	got, err := ClientTLS(ca, base)
	if err != nil {
		t.Fatal(err)
	}
	if got == base || got.ServerName != "example.com" || verify(got) != nil {
		t.Errorf("with the CA file: %+v; verify: %v", got, verify(got))
	}
	if verify(base) == nil {
		t.Error("the base configuration's roots were changed")
	}
	if got, err := ClientTLS("", base); got != base || err != nil {
		t.Errorf("no CA file: %p, %v; want the base %p", got, err, base)
	}
	if got, err := ClientTLS("", nil); got != nil || err != nil {
		t.Errorf("neither: %v, %v; want Go's defaults (nil)", got, err)
	}

	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.pem"), "no such file"},
		{write("text.pem", "not a certificate\n"), "no PEM certificate"},
		{write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), "certificate 1"},
	} {
		_, err := ClientTLS(tc.path, nil)
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("CA file %s: err = %v", tc.path, err)
		}
	}
}
