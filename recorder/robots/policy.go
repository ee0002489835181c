package robots

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
)

// Policy is how long robots.txt rules hold and how a failed fetch is
// retried.
type Policy struct {
	// TTL is how long rules are in force once fetched; it must be
	// positive.
	TTL time.Duration
	// Retry is the wait before the first retry of a failed fetch,
	// doubled on each failure in a row (and never past TTL); 0 means no
	// retry.
	Retry time.Duration
	// Retries is how many times a failed fetch is retried.
	Retries int
}

// Date dates new rules of origin, fetched at now, given the origin's
// previous rules prev (nil when none) and the fetch's error: they expire
// after TTL; a failure (5xx, no response) is retried after Retry,
// doubled on each failure in a row, up to Retries times, with the
// origin's URLs waiting meanwhile. An origin that is unreachable outright
// ([Unreachable]) gets one retry at most; refused (an address the
// crawler may not fetch, say) none. After the last retry the origin
// stays disallowed until the TTL, its URLs counted as excluded.
//
// Date sets rules' origin and dates before they are stored; it reports
// whether the origin had rules of its own that allowed something
// (refetch) and whether the fetch will be retried (retry).
func (p Policy) Date(rules *Rules, origin string, prev *Rules, err error, refused bool, now time.Time) (refetch, retry bool) {
	rules.origin, rules.fetchedAt = origin, now
	refetch = prev != nil && prev.origin == origin && !prev.denyAll
	rules.expires = now.Add(p.TTL)
	if !rules.denyAll {
		return refetch, false
	}
	rules.failures = 1
	if prev != nil && prev.origin == origin && prev.denyAll {
		rules.failures = prev.failures + 1
	}
	retries := p.Retries
	if Unreachable(err) {
		retries = min(retries, 1)
	}
	if rules.failures <= retries && !refused && p.Retry > 0 {
		rules.expires = now.Add(min(p.Retry<<(rules.failures-1), p.TTL))
		rules.retrying = true
		retry = true
	}
	return refetch, retry
}

// Unreachable reports whether err says the origin cannot be reached at
// all, as opposed to a server that answered badly or slowly: the
// connection was refused, the TLS handshake failed (any failure
// [fetch.Get] marks [fetch.ErrTLSHandshake]: an alert such as a server's
// "internal error" for a name it has no certificate for, no TLS there, a
// certificate not trusted, a connection closed mid-handshake), or the
// host name does not resolve.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var dnsErr *net.DNSError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	// net/http turns a plain HTTP answer to a TLS hello into a bare
	// error string, dropping the tls.RecordHeaderError.
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fetch.ErrTLSHandshake) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") ||
		(errors.As(err, &dnsErr) && dnsErr.IsNotFound) ||
		errors.As(err, &recErr) || errors.As(err, &alert) || errors.As(err, &verify) ||
		errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalid)
}
