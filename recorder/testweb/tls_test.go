package testweb

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tlsClient is [client] over TLS: it trusts only roots and offers HTTP/2.
func tlsClient(addr string, roots *x509.CertPool) *http.Client {
	c := client(addr)
	tr := c.Transport.(*http.Transport)
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	tr.ForceAttemptHTTP2 = true
	return c
}

// TestServeTLS: over TLS, every served host (generated, trap, site) and
// the server's own address verify against the CA's PEM and only it, and
// answer as over plain HTTP; a host the web does not serve gets no
// certificate.
func TestServeTLS(t *testing.T) {
	site := t.TempDir()
	if err := os.WriteFile(filepath.Join(site, "index.html"), []byte(`<a href="x.html">x</a>`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost, c.TrapHosts = 3, 5, 1
	c.Sites = map[string]string{"docs.example.org": site}
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ServeWebTLS(t.Context(), "127.0.0.1:0", w, ca)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Errorf("URL %s", s.URL())
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca.PEM()) {
		t.Fatal("CA PEM does not parse")
	}
	cl := tlsClient(s.Addr(), roots)
	defer cl.CloseIdleConnections()
	plain := client(s.Addr()) // nothing trusted but the system roots
	defer plain.CloseIdleConnections()

	get := func(cl *http.Client, u string) (int, string, error) {
		resp, err := cl.Get(u)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	for _, u := range []string{"https://h0001.test/", "https://h0003.test/p/2.html", "https://trap1.test/cal/2024/01",
		"https://docs.example.org/", "https://DOCS.example.org./", s.URL()} {
		code, body, err := get(cl, u)
		if err != nil || code != 200 {
			t.Errorf("%s: %d %v", u, code, err)
			continue
		}
		if u == "https://docs.example.org/" && !strings.Contains(body, `href="x.html"`) {
			t.Errorf("%s: body %q", u, body)
		}
		if _, _, err := get(plain, u); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: without the CA: %v", u, err)
		}
	}
	// The same page over TLS as the web's ground truth says.
	if code, _, _ := get(cl, "https://h0002.test/p/1.html"); code != w.mustStatus("http://h0002.test/p/1.html") {
		t.Errorf("h0002.test/p/1.html: status %d", code)
	}
	if _, _, err := get(cl, "https://unknown.example/"); err == nil {
		t.Errorf("a host the web does not serve got a certificate")
	}
}

func (w *Web) mustStatus(u string) int {
	code, _ := w.Status(u)
	return code
}
