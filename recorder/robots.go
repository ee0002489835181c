package recorder

import (
	"strconv"
	"strings"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// robotsRules is a host's parsed robots.txt outcome (RFC 9309):
//   - 2xx: the body's rules, matched with grobotstxt (Google's matcher);
//   - 4xx (and 3xx, which the crawler does not follow): allow everything;
//   - 5xx or no response: disallow everything. The crawler does not retry;
//     the host is treated as excluded for the rest of this crawl (RFC 9309
//     allows assuming complete disallow while the server errs), and its
//     URLs are counted as robots exclusions.
type robotsRules struct {
	status     int
	body       string
	allowAll   bool
	denyAll    bool
	crawlDelay time.Duration
}

func newRobotsRules(status int, body string, fetchErr error, agent string) *robotsRules {
	r := &robotsRules{status: status}
	switch {
	case fetchErr != nil || status >= 500 || status == 0:
		r.denyAll = true
	case status >= 200 && status < 300:
		r.body = body
		r.crawlDelay = crawlDelay(body, agent)
		if strings.TrimSpace(body) == "" {
			r.allowAll = true
		}
	default:
		r.allowAll = true
	}
	return r
}

// allowed reports whether agent may fetch u. Not safe for concurrent use
// of the same rules (callers hold the host).
func (r *robotsRules) allowed(agent, u string) bool {
	switch {
	case r.denyAll:
		return false
	case r.allowAll:
		return true
	}
	return grobotstxt.AgentAllowed(r.body, agent, u)
}

// robotsAgent is the product token of a User-Agent string, the name matched
// against robots.txt user-agent lines ("crawltrace" for
// "crawltrace/0.1 (+https://...)").
func robotsAgent(ua string) string {
	if i := strings.IndexAny(ua, "/ "); i > 0 {
		return ua[:i]
	}
	return ua
}

// crawlDelay returns the Crawl-delay of the group that applies to agent
// (a group naming it, else the "*" group), or 0.
func crawlDelay(body, agent string) time.Duration {
	h := &delayHandler{agent: strings.ToLower(agent)}
	grobotstxt.Parse(body, h)
	d := h.star
	if h.haveSpecific {
		d = h.specific
	}
	if d <= 0 || d > 1e6 {
		return 0
	}
	return time.Duration(d * float64(time.Second))
}

type delayHandler struct {
	agent           string
	inGroup, inStar bool
	lastAgent       bool
	specific, star  float64
	haveSpecific    bool
}

func (h *delayHandler) HandleRobotsStart() {}
func (h *delayHandler) HandleRobotsEnd()   {}
func (h *delayHandler) HandleUserAgent(_ int, v string) {
	if !h.lastAgent {
		h.inGroup, h.inStar = false, false
	}
	h.lastAgent = true
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "*" {
		h.inStar = true
	} else if v != "" && (v == h.agent || strings.HasPrefix(v, h.agent)) {
		h.inGroup = true
	}
}
func (h *delayHandler) HandleAllow(int, string)    { h.lastAgent = false }
func (h *delayHandler) HandleDisallow(int, string) { h.lastAgent = false }
func (h *delayHandler) HandleSitemap(int, string)  {}
func (h *delayHandler) HandleUnknownAction(_ int, action, value string) {
	h.lastAgent = false
	if !strings.EqualFold(strings.TrimSpace(action), "crawl-delay") {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil {
		return
	}
	if h.inGroup {
		h.specific, h.haveSpecific = f, true
	} else if h.inStar {
		h.star = f
	}
}
