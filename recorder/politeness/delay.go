package politeness

import "time"

// Delay is Mercator's politeness rule: after a request that took d, a
// server waits Factor x d before its next request, at least Min and at
// least the Crawl-delay its robots.txt asks, at most Max (or Min, when Max
// is below it): the crawl's DelayFactor, MinDelay and MaxDelay. The zero
// value never waits (Max caps every delay). A Delay is a value, safe for
// concurrent use.
type Delay struct {
	Factor   float64
	Min, Max time.Duration
}

// Wait is the delay after a request that took d to a server whose
// robots.txt asks crawlDelay.
func (r Delay) Wait(d, crawlDelay time.Duration) time.Duration {
	wait := time.Duration(r.Factor * float64(d))
	wait = max(wait, r.Min, crawlDelay)
	return min(wait, max(r.Max, r.Min))
}
