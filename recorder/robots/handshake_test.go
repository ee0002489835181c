package robots

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/fetch"
)

// TestHandshakeAlertOneRetry: a robots.txt fetch from a real local
// server that fails the TLS handshake with an alert ("remote error: tls:
// internal error", as a server with no certificate for the name sends)
// is retried once, a minute later at the default --robots-retry, and not
// at 0, 60, 180, 420 and 900 s like a 5xx.
func TestHandshakeAlertOneRetry(t *testing.T) {
	addr := crawltest.NoCertTLS(t, nil)
	c := fetch.NewClient(fetch.ClientConfig{Timeout: 5 * time.Second, AllowPrivate: true})
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	r := fetch.Get(context.Background(), c, "crawltrace", "https://"+addr+"/robots.txt", 1<<10, &buf, false)
	if r.Err == nil || r.Err.Error() == "" {
		t.Fatalf("the handshake did not fail: %+v", r)
	}
	t.Logf("error: %v", r.Err)

	p := Policy{TTL: 24 * time.Hour, Retry: time.Minute, Retries: 4} // the defaults
	now := time.Unix(0, 0)
	var prev *Rules
	var tries []time.Duration // when each fetch was made, from the first
	for at := now; ; {
		tries = append(tries, at.Sub(now))
		rules := New(r.Status, "", r.Err, "crawltrace")
		_, retry := p.Date(rules, "https://dead.test", prev, r.Err, false, at)
		if !retry {
			break
		}
		prev, at = rules, rules.Expires()
	}
	if want := []time.Duration{0, time.Minute}; !slices.Equal(tries, want) {
		t.Errorf("robots.txt fetched at %v, want %v", tries, want)
	}
}
