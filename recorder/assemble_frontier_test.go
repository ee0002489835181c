package recorder

import "github.com/crawltrace/crawltrace/recorder/frontier"

// newFrontier is a frontier of order keyed by host name, with no delay
// rule: a request's delay is its duration.
func newFrontier(order string, seed uint64) *frontier.Frontier {
	return frontier.New(frontier.Options{Order: order, Seed: seed})
}
