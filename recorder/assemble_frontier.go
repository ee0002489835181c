package recorder

import (
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// robotsPolicy is the robots.txt TTL and retry policy of the node's
// Config.
func (n *node) robotsPolicy() robots.Policy {
	ttl := n.cfg.RobotsTTL
	if ttl <= 0 {
		ttl = DefaultConfig().RobotsTTL
	}
	return robots.Policy{TTL: ttl, Retry: n.cfg.RobotsRetry, Retries: n.cfg.RobotsRetries}
}

// frontierOptions are the options of node n's frontier: its crawl order,
// a seed of its own, the politeness key and delay rule of the crawl and,
// in ip mode, DNS lookups off the splitter's goroutine.
func (n *node) frontierOptions() frontier.Options {
	o := frontier.Options{Order: n.cfg.Order, Seed: n.cfg.Seed ^ uint64(n.id)*0x9e3779b97f4a7c15,
		KeyOf: n.c.keys.Key, Delay: delayOf(n.cfg).Wait}
	if n.cfg.PolitenessKey == PolitenessIP {
		o.Keys = n.c.keys
	}
	if n.c.clock != nil {
		o.Now = n.c.clock.Now
	}
	return o
}
