package recorder

import "time"

// robotsState is a host's robots.txt outcome as saved in a checkpoint
// (gob): one exported field per field of [robotsRules], the rules of the
// host's other origins chained through Next. A field added to robotsRules
// is added here and in the two conversions below.
type robotsState struct {
	Status     int
	Body       string
	AllowAll   bool
	DenyAll    bool
	CrawlDelay time.Duration
	Origin     string
	FetchedAt  time.Time
	Expires    time.Time
	Failures   int
	Retrying   bool
	Next       *robotsState
}

func (r *robotsRules) state() *robotsState {
	if r == nil {
		return nil
	}
	return &robotsState{Status: r.status, Body: r.body, AllowAll: r.allowAll, DenyAll: r.denyAll,
		CrawlDelay: r.crawlDelay, Origin: r.origin, FetchedAt: r.fetchedAt, Expires: r.expires,
		Failures: r.failures, Retrying: r.retrying, Next: r.next.state()}
}

func (s *robotsState) rules() *robotsRules {
	if s == nil {
		return nil
	}
	return &robotsRules{status: s.Status, body: s.Body, allowAll: s.AllowAll, denyAll: s.DenyAll,
		crawlDelay: s.CrawlDelay, origin: s.Origin, fetchedAt: s.FetchedAt, expires: s.Expires,
		failures: s.Failures, retrying: s.Retrying, next: s.Next.rules()}
}
