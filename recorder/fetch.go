package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrPrivateAddress is returned (wrapped) by a dial to an address the
// crawler refuses without [Config.AllowPrivate].
var ErrPrivateAddress = errors.New("recorder: refusing to connect to a private, loopback, link-local, multicast or unspecified address")

// newHTTPClient builds the fetch client: keep-alive, timeouts, redirects
// not followed, --resolve applied (else, in ip mode, the address of the
// host's politeness key dialled) and private addresses refused at dial
// time, on the address actually dialled.
func newHTTPClient(cfg *Config, keys *politenessKeys) *http.Client {
	dialer := &net.Dialer{Timeout: min(cfg.Timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || forbiddenIP(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrPrivateAddress, address)
			}
			return nil
		}
	}
	resolve := cfg.Resolve
	hook := cfg.dialHook
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to := resolveAddr(resolve, addr); to != addr {
				addr = to
			} else {
				addr = keys.dialAddr(addr)
			}
			if hook != nil {
				hook(addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConns:          max(100, 2*cfg.Workers),
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       cfg.tlsConfig,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// resolveAddr applies a --resolve map to a dial address host:port: the
// first entry of "host:port", "*:port", "host", "*" ([Config.Resolve]).
func resolveAddr(m map[string]string, addr string) string {
	if len(m) == 0 {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	host = strings.ToLower(host)
	to, ok := "", false
	for _, k := range [...]string{host + ":" + port, "*:" + port, host, "*"} {
		if to, ok = m[k]; ok {
			break
		}
	}
	if !ok {
		return addr
	}
	if _, _, err := net.SplitHostPort(to); err == nil {
		return to
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(to, "["), "]"), port)
}

// resolveHost is the --resolve entry that stands for host as a whole,
// for an ip-mode politeness key (one per host name, whatever the port):
// its "host" entry, else its "host:PORT" entry of the lowest port, else
// "*", else the "*:PORT" entry of the lowest port. ok is false when no
// entry applies.
func resolveHost(m map[string]string, host string) (addr string, ok bool) {
	host = strings.ToLower(host)
	if addr, ok = m[host]; ok {
		return addr, true
	}
	if addr, ok = lowestPort(m, host); ok {
		return addr, true
	}
	if addr, ok = m["*"]; ok {
		return addr, true
	}
	return lowestPort(m, "*")
}

// lowestPort is the entry "host:PORT" of m with the lowest PORT.
func lowestPort(m map[string]string, host string) (addr string, ok bool) {
	best := 0
	for k, a := range m {
		h, p, found := strings.Cut(k, ":")
		if !found || h != host {
			continue
		}
		if n, err := strconv.Atoi(p); err == nil && (!ok || n < best) {
			addr, best, ok = a, n, true
		}
	}
	return addr, ok
}

// fetchResult is the outcome of one request.
type fetchResult struct {
	status      int
	contentType string
	location    string
	truncated   bool
	skipped     bool // the body was not read: not HTML (page fetches only)
	dur         time.Duration
	err         error

	// What the connection did (net/http/httptrace): gotConn reports that
	// a connection was obtained, reused that it had served a request
	// before, dialed that it was dialled for this request, taking dial
	// (ConnectStart to ConnectDone); took runs from GotConn to the end of
	// the body; closed reports that the server announced it closes the
	// connection after this response (Connection: close, HTTP/1.0).
	gotConn, reused, dialed, closed bool
	dial, took                      time.Duration
}

// fetch GETs u into buf (reset first), reading at most limit bytes of the
// decoded body (gzip, deflate and br are decoded here, see body.go, so
// the cap applies to the decoded size). For a page (page set) whose
// Content-Type is declared and not HTML, the body is not read at all.
func fetch(ctx context.Context, c *http.Client, ua, u string, limit int64, buf *bytes.Buffer, page bool) fetchResult {
	buf.Reset()
	start := time.Now()
	var r fetchResult
	// The dial callbacks may run on the transport's dialing goroutine, even
	// after Do returns (a dial the request did not wait for), so the
	// connection facts go through mu.
	var mu sync.Mutex
	var connAt, dialAt time.Time
	var tc fetchResult
	trace := &httptrace.ClientTrace{
		ConnectStart: func(string, string) {
			mu.Lock()
			if dialAt.IsZero() {
				dialAt = time.Now()
			}
			mu.Unlock()
		},
		ConnectDone: func(_, _ string, err error) {
			mu.Lock()
			if err == nil && !dialAt.IsZero() && !tc.gotConn {
				tc.dialed, tc.dial = true, time.Since(dialAt)
			}
			mu.Unlock()
		},
		GotConn: func(info httptrace.GotConnInfo) {
			mu.Lock()
			tc.gotConn, tc.reused, connAt = true, info.Reused, time.Now()
			if info.Reused {
				tc.dialed, tc.dial = false, 0
			}
			mu.Unlock()
		},
	}
	ctx = httptrace.WithClientTrace(ctx, trace)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.err = err
		r.dur = time.Since(start)
		return r
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	req.Header.Set("Accept-Encoding", acceptEncoding)
	resp, err := c.Do(req)
	if err != nil {
		r.err = err
		r.dur = time.Since(start)
		return r
	}
	r.status = resp.StatusCode
	r.closed = resp.Close
	r.contentType = resp.Header.Get("Content-Type")
	r.location = resp.Header.Get("Location")
	if page && skipBody(resp) {
		// Decided on the headers: no link in a non-HTML body.
		r.skipped = true
		r.closed = discardBody(resp) || r.closed
	} else if body, err := decodeBody(resp.Header, resp.Body); err != nil {
		r.err = err
		r.closed = discardBody(resp) || r.closed
	} else {
		n, err := io.Copy(buf, io.LimitReader(body, limit+1))
		if n > limit {
			buf.Truncate(int(limit))
			r.truncated = true
			err = nil
		}
		if r.truncated || err != nil {
			// The rest of the body is not read: the connection goes.
			r.closed = true
		}
		resp.Body.Close()
		if err != nil {
			r.err = decodeErr(resp.Header, err)
		}
	}
	r.dur = time.Since(start)
	mu.Lock()
	r.gotConn, r.reused, r.dialed, r.dial = tc.gotConn, tc.reused, tc.dialed, tc.dial
	if r.gotConn {
		r.took = time.Since(connAt)
	}
	mu.Unlock()
	return r
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}
