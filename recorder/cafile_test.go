package recorder

import (
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestCAFile: an https server whose certificate no system root signs is
// crawled when its CA is given in CAFile, and is unreachable (its
// robots.txt fails, its URLs are excluded) without it.
func TestCAFile(t *testing.T) {
	srv := httptest.NewUnstartedServer(linkPage("/a"))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	// A bundle: a key block before the certificate is skipped.
	bundle := append([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), pemBytes...)
	if err := os.WriteFile(caFile, bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	seed := "https://example.com/" // a name in httptest's certificate
	for _, trust := range []bool{true, false} {
		cfg := localConfig(t, srv.Listener.Addr().String(), seed)
		cfg.RobotsRetries = 0
		if trust {
			cfg.CAFile = caFile
		}
		res := runCrawl(t, cfg)
		var ok []string
		for _, p := range readPages(t, cfg.OutDir, 0) {
			if p.Status == http.StatusOK && !strings.HasSuffix(p.URL, "/robots.txt") {
				ok = append(ok, p.URL)
			}
		}
		if trust && strings.Join(ok, " ") != "https://example.com/ https://example.com/a" {
			t.Errorf("with the CA file: fetched %v", ok)
		}
		if !trust && (len(ok) != 0 || res.Stats.RobotsExcluded != 1) {
			t.Errorf("without the CA file: fetched %v, %d URLs excluded by robots", ok, res.Stats.RobotsExcluded)
		}
	}
}

// TestCAFileBad: a CA file that is missing, holds no certificate or a
// broken one is a configuration error naming the file, before any output
// is written.
func TestCAFileBad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return crawltest.WriteFile(t, dir, name, body) }
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.pem"), "no such file"},
		{write("text.pem", "not a certificate\n"), "no PEM certificate"},
		{write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), "certificate 1"},
	} {
		cfg := localConfig(t, "127.0.0.1:1", "https://a.test/")
		cfg.CAFile = tc.path
		_, err := Run(t.Context(), cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("CA file %s: err = %v", tc.path, err)
		}
		if ents, _ := os.ReadDir(cfg.OutDir); len(ents) != 0 {
			t.Errorf("CA file %s: output written: %v", tc.path, ents)
		}
	}
}
