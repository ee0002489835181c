package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
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
// crawler refuses without [ClientConfig.AllowPrivate]. Its text names the
// recorder, as the page log has always recorded it.
var ErrPrivateAddress = errors.New("recorder: refusing to connect to a private, loopback, link-local, multicast or unspecified address")

// ErrTLSHandshake marks (wrapped, beside the error itself) a request whose
// TLS handshake failed, however: an alert from the server ("remote error:
// tls: internal error" from a server with no certificate for the name), a
// certificate not trusted, a plain HTTP answer, a connection closed or
// timed out mid-handshake. The error's text is the error's own.
var ErrTLSHandshake = errors.New("tls handshake failed")

// handshakeError is a request's error marked [ErrTLSHandshake].
type handshakeError struct{ err error }

func (e handshakeError) Error() string   { return e.err.Error() }
func (e handshakeError) Unwrap() []error { return []error{e.err, ErrTLSHandshake} }

// NewClient builds the fetch client: keep-alive, timeouts, redirects
// not followed, Resolve applied (else DialAddr) and private addresses
// refused at dial time, on the address actually dialled. It is safe for
// concurrent use, as every [http.Client] is.
func NewClient(cfg ClientConfig) *http.Client {
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
	dialAddr := cfg.DialAddr
	hook := cfg.DialHook
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to := resolveAddr(resolve, addr); to != addr {
				addr = to
			} else if dialAddr != nil {
				addr = dialAddr(addr)
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
		TLSClientConfig:       cfg.TLS,
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
// first entry of "host:port", "*:port", "host", "*".
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

// ResolveHost is the entry of a --resolve map m that stands for host as
// a whole, for an ip-mode politeness key (one per host name, whatever
// the port): its "host" entry, else its "host:PORT" entry of the lowest
// port, else "*", else the "*:PORT" entry of the lowest port. ok is false
// when no entry applies. The map's keys are "host", "host:PORT", "*" and
// "*:PORT", host in lower case; its values are "IP" or "IP:PORT".
func ResolveHost(m map[string]string, host string) (addr string, ok bool) {
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

// Result is the outcome of one request.
type Result struct {
	Status      int           // the response's status code; 0 without a response
	ContentType string        // its Content-Type header
	Location    string        // its Location header
	RetryAfter  string        // its Retry-After header
	Truncated   bool          // the body was cut at the limit
	Skipped     bool          // the body was not read: not HTML (page fetches only)
	Dur         time.Duration // from the start of the request to the end of its body
	Err         error         // no response, or a body that could not be read or decoded
	Conn        Conn          // what the connection did
}

// Conn is what the connection of a request did (net/http/httptrace), as
// a server's performance estimate reads it.
type Conn struct {
	// GotConn reports that a connection was obtained, Reused that it had
	// served a request before, Dialed that it was dialled for this
	// request, taking Dial (ConnectStart to ConnectDone); Closed reports
	// that the connection is gone after this response: the server
	// announced it closes it (Connection: close, HTTP/1.0), or the body
	// was not read to its end.
	GotConn, Reused, Dialed, Closed bool
	// Dial is the time from ConnectStart to ConnectDone of a dialled
	// connection; Took runs from GotConn to the end of the body.
	Dial, Took time.Duration
}

// Get GETs u with client c and User-Agent ua into buf (reset first),
// reading at most limit bytes of the decoded body (gzip, deflate and br
// are decoded here, see body.go, so the cap applies to the decoded size).
// For a page (page set) whose Content-Type is declared and not HTML, the
// body is not read at all. Requests may run at once, each with its own
// buf.
func Get(ctx context.Context, c *http.Client, ua, u string, limit int64, buf *bytes.Buffer, page bool) Result {
	return GetCapture(ctx, c, ua, u, limit, buf, page, nil)
}

// GetCapture is [Get] that also fills capt (when not nil) with the
// request and response as an archive keeps them ([Capture]): the raw body
// is kept up to limit bytes, as much of it as the fetch read.
func GetCapture(ctx context.Context, c *http.Client, ua, u string, limit int64, buf *bytes.Buffer, page bool, capt *Capture) Result {
	buf.Reset()
	start := time.Now()
	var r Result
	// The dial callbacks may run on the transport's dialing goroutine, even
	// after Do returns (a dial the request did not wait for), so the
	// connection facts go through mu.
	var mu sync.Mutex
	var connAt, dialAt time.Time
	var tc Conn
	handshakeFailed := false
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
			if err == nil && !dialAt.IsZero() && !tc.GotConn {
				tc.Dialed, tc.Dial = true, time.Since(dialAt)
			}
			mu.Unlock()
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				mu.Lock()
				handshakeFailed = true
				mu.Unlock()
			}
		},
		GotConn: func(info httptrace.GotConnInfo) {
			mu.Lock()
			tc.GotConn, tc.Reused, connAt = true, info.Reused, time.Now()
			if capt != nil && info.Conn != nil {
				if a, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
					capt.IP = a.Addr().Unmap().String()
				}
			}
			if info.Reused {
				tc.Dialed, tc.Dial = false, 0
			}
			mu.Unlock()
		},
	}
	ctx = httptrace.WithClientTrace(ctx, trace)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.Err = err
		r.Dur = time.Since(start)
		return r
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	req.Header.Set("Accept-Encoding", acceptEncoding)
	resp, err := c.Do(req)
	if err != nil {
		r.Err = err
		mu.Lock()
		if handshakeFailed && !tc.GotConn {
			// The handshake of the connection dialled for this request
			// failed: the transport returns its error.
			r.Err = handshakeError{err}
		}
		mu.Unlock()
		r.Dur = time.Since(start)
		return r
	}
	r.Status = resp.StatusCode
	r.Conn.Closed = resp.Close
	r.ContentType = resp.Header.Get("Content-Type")
	r.Location = resp.Header.Get("Location")
	r.RetryAfter = resp.Header.Get("Retry-After")
	var cb *captureBody
	if capt != nil {
		mu.Lock()
		cb = startCapture(capt, req, resp, limit)
		mu.Unlock()
	}
	if page && skipBody(resp) {
		// Decided on the headers: no link in a non-HTML body.
		r.Skipped = true
		lost := discardBody(resp)
		r.Conn.Closed = lost || r.Conn.Closed
		cb.finish(!lost)
	} else if body, err := decodeBody(resp.Header, resp.Body); err != nil {
		r.Err = err
		lost := discardBody(resp)
		r.Conn.Closed = lost || r.Conn.Closed
		cb.finish(!lost)
	} else {
		n, err := io.Copy(buf, io.LimitReader(body, limit+1))
		body.Close()
		if n > limit {
			buf.Truncate(int(limit))
			r.Truncated = true
			err = nil
		}
		if r.Truncated || err != nil {
			// The rest of the body is not read: the connection goes.
			r.Conn.Closed = true
		}
		resp.Body.Close()
		cb.finish(!r.Truncated && err == nil)
		if err != nil {
			r.Err = decodeErr(resp.Header, err)
		}
	}
	r.Dur = time.Since(start)
	mu.Lock()
	r.Conn.GotConn, r.Conn.Reused, r.Conn.Dialed, r.Conn.Dial = tc.GotConn, tc.Reused, tc.Dialed, tc.Dial
	if r.Conn.GotConn {
		r.Conn.Took = time.Since(connAt)
	}
	mu.Unlock()
	return r
}

// IsRedirect reports whether status is a redirect that names its target
// in Location: 301, 302, 303, 307 or 308.
func IsRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}
