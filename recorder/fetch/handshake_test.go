package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestHandshakeFailureMarked: every way a TLS handshake fails at a real
// local server is marked ErrTLSHandshake, with the error's text as it was
// ("remote error: tls: internal error" from a server that has no
// certificate for the name); a refused connection and a 503 are not.
func TestHandshakeFailureMarked(t *testing.T) {
	noCert := crawltest.NoCertTLS(t, nil)
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = quietLog()
	untrusted.StartTLS()
	defer untrusted.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer plain.Close()
	hangUp := crawltest.HangUp(t) // reads the ClientHello and hangs up
	refused := crawltest.Listen(t)
	refusedAddr := refused.Addr().String()
	refused.Close()

	https := func(addr string) string { return "https://" + strings.TrimPrefix(addr, "https://") + "/robots.txt" }
	for _, c := range []struct {
		name, url string
		marked    bool
		text      string
	}{
		{"alert: no certificate", https(noCert), true, "remote error: tls: internal error"},
		{"untrusted certificate", https(untrusted.Listener.Addr().String()), true, "certificate"},
		{"plain HTTP server", https(plain.Listener.Addr().String()), true, ""},
		{"hung up mid-handshake", https(hangUp), true, ""},
		{"refused", https(refusedAddr), false, "refused"},
		{"503", plain.URL + "/robots.txt", false, ""},
	} {
		cl := NewClient(ClientConfig{Timeout: 5 * time.Second, AllowPrivate: true})
		var buf bytes.Buffer
		r := Get(context.Background(), cl, "test", c.url, 1<<10, &buf, false)
		cl.CloseIdleConnections()
		if got := errors.Is(r.Err, ErrTLSHandshake); got != c.marked {
			t.Errorf("%s: marked %v, want %v (error %v)", c.name, got, c.marked, r.Err)
		}
		if c.text != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), c.text)) {
			t.Errorf("%s: error %v, want it to say %q", c.name, r.Err, c.text)
		}
		if r.Err != nil && strings.Contains(r.Err.Error(), ErrTLSHandshake.Error()) {
			t.Errorf("%s: the marker changed the error's text: %v", c.name, r.Err)
		}
	}
}

// quietLog drops a test server's "TLS handshake error" lines.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
