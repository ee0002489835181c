package testweb

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log"
	"math/big"
	"net"
	"sync"
	"time"
)

// CA is a test certificate authority made for one run: a self-signed CA
// certificate and key held in memory, which sign the certificates of the
// hosts a TLS server serves. A crawler trusts it through its PEM
// ([CA.PEM], crawl --ca-file). It is safe for concurrent use.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	leafKey *ecdsa.PrivateKey // one key for every host certificate
	pem     []byte
}

// certValidity is how long a test certificate is valid; it starts an
// hour in the past so that small clock differences do not matter.
const certValidity = 30 * 24 * time.Hour

// NewCA generates a test CA (ECDSA P-256).
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testweb: CA key: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testweb: host key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "crawltrace testweb CA", Organization: []string{"crawltrace testweb"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testweb: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("testweb: CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, leafKey: leafKey,
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// PEM returns the CA certificate, PEM-encoded.
func (ca *CA) PEM() []byte { return bytes.Clone(ca.pem) }

// Certificate returns the CA certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// HostCertificate issues a server certificate for the given DNS names and
// IP addresses, signed by ca.
func (ca *CA) HostCertificate(names []string, ips []net.IP) (*tls.Certificate, error) {
	now := time.Now()
	cn := ""
	if len(names) > 0 {
		cn = names[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     names,
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &ca.leafKey.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("testweb: host certificate for %v %v: %w", names, ips, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: ca.leafKey, Leaf: leaf}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// hostCerts hands out, by SNI, a certificate for every host a web serves:
// issued by ca for that one name on first use, and kept. A request
// without SNI (by IP address) gets a certificate for the listener's
// address and the loopback addresses, with localhost; a name the web
// does not serve gets none, and its handshake fails, as a real server's
// would for a name it has no certificate for.
type hostCerts struct {
	ca    *CA
	web   *Web
	ips   []net.IP
	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

func (h *hostCerts) get(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := hostOnly(hello.ServerName)
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.certs[name]; ok {
		return c, nil
	}
	var c *tls.Certificate
	var err error
	if _, served := h.web.byName[name]; served {
		c, err = h.ca.HostCertificate([]string{name}, nil)
	} else if isRootHost(name) {
		name = "" // one certificate for the server's own addresses
		if c, ok := h.certs[name]; ok {
			return c, nil
		}
		c, err = h.ca.HostCertificate([]string{"localhost"}, h.ips)
	} else {
		return nil, fmt.Errorf("testweb: no certificate for host %q", hello.ServerName)
	}
	if err != nil {
		return nil, err
	}
	h.certs[name] = c
	return c, nil
}

// ServeWebTLS serves w over TLS on addr, like [ServeWeb]: every host of
// the web gets a certificate for its name signed by ca (issued on its
// first handshake), and the server's own addresses one for them. HTTP/2
// is offered beside HTTP/1.1. Handshake failures (a client that does not
// trust ca, a name the web does not serve) are not logged.
func ServeWebTLS(ctx context.Context, addr string, w *Web, ca *CA) (*Server, error) {
	certs := &hostCerts{ca: ca, web: w, certs: map[string]*tls.Certificate{},
		ips: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
			certs.ips = append(certs.ips, ip)
		}
	}
	srv := w.server()
	srv.TLSConfig = &tls.Config{GetCertificate: certs.get, MinVersion: tls.VersionTLS12}
	srv.ErrorLog = log.New(handshakeFilter{}, "", log.LstdFlags)
	hs, err := serveHTTP(ctx, addr, srv)
	if err != nil {
		return nil, err
	}
	return &Server{httpServer: hs, web: w, tls: true}, nil
}

// handshakeFilter drops net/http's "TLS handshake error" lines and writes
// the others to the standard logger's output.
type handshakeFilter struct{}

func (handshakeFilter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("TLS handshake error")) {
		return len(p), nil
	}
	return log.Writer().Write(p)
}
