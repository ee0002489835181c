package recorder

import "time"

// robotsState is a host's robots.txt outcome as saved in a checkpoint
// (gob): one exported field per field of [robotsRules]. A field added to
// robotsRules is added here and in the two conversions below.
type robotsState struct {
	Status     int
	Body       string
	AllowAll   bool
	DenyAll    bool
	CrawlDelay time.Duration
}

func (r *robotsRules) state() *robotsState {
	return &robotsState{Status: r.status, Body: r.body, AllowAll: r.allowAll, DenyAll: r.denyAll, CrawlDelay: r.crawlDelay}
}

func (s *robotsState) rules() *robotsRules {
	return &robotsRules{status: s.Status, body: s.Body, allowAll: s.AllowAll, denyAll: s.DenyAll, crawlDelay: s.CrawlDelay}
}
