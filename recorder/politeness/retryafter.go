package politeness

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter is the wait a response's Retry-After header value v asks
// for, read at now (RFC 9110 10.2.3): delay-seconds (a non-negative
// integer) or an HTTP-date, a date in the past asking for none. ok is
// false when v is neither. A delay too large for a time.Duration is cut
// to the largest one; the caller caps it.
func RetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
				return time.Duration(1<<63 - 1), true
			}
			return 0, false
		}
		if n > uint64((1<<63-1)/time.Second) {
			return time.Duration(1<<63 - 1), true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// RetryAfterStatus reports whether a response of this status asks the
// crawler to come back later when it carries Retry-After: 429 Too Many
// Requests and 503 Service Unavailable.
func RetryAfterStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}
