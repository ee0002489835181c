package crawltest

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
)

// NoCertTLS starts a TLS server on 127.0.0.1 (any free port) that has a
// certificate for no name, so that every handshake fails with the alert
// such a server sends ("remote error: tls: internal error"), and returns
// its address; it is closed when the test ends. hello, when not nil, is
// called with the server name of every ClientHello.
func NoCertTLS(t testing.TB, hello func(serverName string)) string {
	t.Helper()
	ln := Listen(t)
	srv := &http.Server{Handler: http.NotFoundHandler(), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(tls.NewListener(ln, &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if hello != nil {
			hello(h.ServerName)
		}
		return nil, errors.New("no certificate")
	}}))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// HangUp listens on 127.0.0.1 (any free port), reads what each connection
// sends first (a ClientHello, a request line) and hangs up; it returns
// the address and stops when the test ends.
func HangUp(t testing.TB) string {
	t.Helper()
	ln := Listen(t)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Read(make([]byte, 512))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// Listen listens on 127.0.0.1, on any free port; the caller closes the
// listener, or hands it to a server that does.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Listeners returns n listeners from [Listen] and their addresses, all
// open at once (so the ports differ): the peers of an n-node crawl.
func Listeners(t testing.TB, n int) ([]net.Listener, []string) {
	t.Helper()
	lns, addrs := make([]net.Listener, n), make([]string, n)
	for i := range n {
		lns[i] = Listen(t)
		addrs[i] = lns[i].Addr().String()
	}
	return lns, addrs
}
