package robots

import "time"

// A host's robots.txt rules are a list of [Rules], one per origin (RFC
// 9309 keeps one robots.txt per scheme, host and port), chained through
// next. Rules with an empty origin apply to every origin of the host.

// ForOrigin returns the rules of origin in the list r, nil when none.
// Rules with an empty origin apply to every origin.
func (r *Rules) ForOrigin(origin string) *Rules {
	for ; r != nil; r = r.next {
		if r.origin == origin || r.origin == "" {
			return r
		}
	}
	return nil
}

// With returns the list r with x replacing the rules of x's origin. r is
// not changed (its other rules are copied); x becomes the head.
func (r *Rules) With(x *Rules) *Rules {
	x.next = nil
	tail := x
	for ; r != nil; r = r.next {
		if r.origin != x.origin {
			c := *r
			c.next = nil
			tail.next = &c
			tail = &c
		}
	}
	return x
}

// MaxCrawlDelay is the largest Crawl-delay over the origins of a host.
func (r *Rules) MaxCrawlDelay() time.Duration {
	var d time.Duration
	for ; r != nil; r = r.next {
		d = max(d, r.crawlDelay)
	}
	return d
}

// Current reports whether rules r are in force at now (fetched, and not
// expired by their TTL or a retry's backoff).
func (r *Rules) Current(now time.Time) bool {
	return r != nil && (r.expires.IsZero() || now.Before(r.expires))
}

// WaitingRetry reports whether r is a failed fetch whose retry is due
// later than now: the origin's URLs wait instead of being excluded.
func (r *Rules) WaitingRetry(now time.Time) bool {
	return r != nil && r.retrying && now.Before(r.expires)
}

// Expires is when r stop being in force (zero: never), when a failed
// fetch's retry is due.
func (r *Rules) Expires() time.Time { return r.expires }
