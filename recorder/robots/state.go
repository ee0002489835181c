package robots

import "time"

// State is a host's robots.txt outcome as saved in a checkpoint (gob):
// one exported field per field of [Rules], the rules of the host's other
// origins chained through Next. A field added to Rules is added here and
// in the two conversions below.
//
// State is an alias of the unexported robotsState because gob writes a
// struct's type name into the stream: the name robotsState keeps the
// checkpoint's bytes as they were before this package existed.
type State = robotsState

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
	Next       *State
}

// State returns the list r in its checkpointed form (nil for nil).
func (r *Rules) State() *State {
	if r == nil {
		return nil
	}
	return &State{Status: r.status, Body: r.body, AllowAll: r.allowAll, DenyAll: r.denyAll,
		CrawlDelay: r.crawlDelay, Origin: r.origin, FetchedAt: r.fetchedAt, Expires: r.expires,
		Failures: r.failures, Retrying: r.retrying, Next: r.next.State()}
}

// Rules returns the rules list s was saved from (nil for nil).
func (s *State) Rules() *Rules {
	if s == nil {
		return nil
	}
	return &Rules{status: s.Status, body: s.Body, allowAll: s.AllowAll, denyAll: s.DenyAll,
		crawlDelay: s.CrawlDelay, origin: s.Origin, fetchedAt: s.FetchedAt, expires: s.Expires,
		failures: s.Failures, retrying: s.Retrying, next: s.Next.Rules()}
}
