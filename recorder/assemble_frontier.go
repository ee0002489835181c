package recorder

import "github.com/crawltrace/crawltrace/recorder/robots"

// robotsPolicy is the robots.txt TTL and retry policy of the node's
// Config.
func (n *node) robotsPolicy() robots.Policy {
	ttl := n.cfg.RobotsTTL
	if ttl <= 0 {
		ttl = DefaultConfig().RobotsTTL
	}
	return robots.Policy{TTL: ttl, Retry: n.cfg.RobotsRetry, Retries: n.cfg.RobotsRetries}
}
