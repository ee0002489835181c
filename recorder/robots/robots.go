// Package robots holds a crawler's robots.txt rules (RFC 9309): an
// origin's parsed outcome ([Rules], matched with Google's matcher through
// grobotstxt), the Crawl-delay of the groups that apply to the crawler,
// the list of a host's origins' rules, their TTL and retry backoff
// ([Policy]) and their checkpointed form ([State]). Fetching robots.txt
// is the worker's business; this package only turns a response into
// rules and answers questions about them.
package robots

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jimsmart/grobotstxt"
)

// Rules is an origin's parsed robots.txt outcome (RFC 9309):
//   - 2xx: the body's rules, matched with grobotstxt (Google's matcher);
//   - 3xx: followed by the fetcher, up to five hops (recorder/worker
//     robots.go); a longer chain or one without a Location is treated
//     as unavailable, like 4xx;
//   - 4xx: allow everything;
//   - 5xx or no response: disallow everything. The fetch is retried with
//     backoff while the origin's URLs wait, parked (the frontier's
//     schedule_robots.go; see [Policy.Date]); after the last retry the
//     origin stays disallowed until the rules expire and its URLs are
//     counted as robots exclusions.
//
// The fields below crawlDelay are plain values so that they can be
// checkpointed: the origin the rules belong to ("" applies to every
// origin), when they were fetched, when they expire (zero: never), how
// many fetches in a row failed, whether the origin waits for a retry
// until expires, and the next origin's rules of the same host. Rules are
// never changed once stored: new rules replace them ([Rules.With]).
// Stored rules are safe for concurrent reads.
type Rules struct {
	status     int
	body       string
	allowAll   bool
	denyAll    bool
	crawlDelay time.Duration

	origin    string
	fetchedAt time.Time
	expires   time.Time
	failures  int
	retrying  bool
	next      *Rules
}

// New parses the outcome of a robots.txt fetch: the response status
// (0: none), the body read and the fetch's error, for the crawler whose
// robots.txt name is agent ([Agent]).
func New(status int, body string, fetchErr error, agent string) *Rules {
	r := &Rules{status: status}
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

// Allowed reports whether agent may fetch u. Nil rules allow nothing.
func (r *Rules) Allowed(agent, u string) bool {
	switch {
	case r == nil || r.denyAll:
		return false
	case r.allowAll:
		return true
	}
	return grobotstxt.AgentAllowed(r.body, agent, u)
}

// Agent is the product token of a User-Agent string, the name matched
// against robots.txt user-agent lines ("crawltrace" for
// "crawltrace/0.1 (+https://...)").
func Agent(ua string) string {
	if i := strings.IndexAny(ua, "/ "); i > 0 {
		return ua[:i]
	}
	return ua
}

// crawlDelay returns the Crawl-delay of the groups that apply to agent,
// or 0. Groups are selected exactly as grobotstxt selects the rules: a
// user-agent line starts a new group only after an allow or disallow line
// (other lines, Crawl-delay included, do not end a group); a line names
// the agent when its product token (the leading RFC 7231 token
// characters, so "crawltrace/1.0" but not "crawltracex") equals the agent
// case-insensitively; "*" (alone or followed by a space) is the global
// group. If any group names the agent, only such groups count, even when
// none of them has a Crawl-delay; otherwise the global groups do. The
// largest delay of the counted groups wins.
func crawlDelay(body, agent string) time.Duration {
	h := &delayHandler{agent: agent}
	grobotstxt.Parse(body, h)
	d := h.star
	if h.everSpecific {
		d = h.specific
	}
	if d <= 0 || d > 1e6 {
		return 0
	}
	return time.Duration(d * float64(time.Second))
}

type delayHandler struct {
	agent                    string
	seenSpecific, seenGlobal bool // the current group names the agent, "*"
	seenSeparator            bool // a rule line was seen since the last user-agent line
	everSpecific             bool
	specific, star           float64
}

func (h *delayHandler) HandleRobotsStart() {}
func (h *delayHandler) HandleRobotsEnd()   {}
func (h *delayHandler) HandleUserAgent(_ int, v string) {
	if h.seenSeparator {
		h.seenSpecific, h.seenGlobal, h.seenSeparator = false, false, false
	}
	if len(v) >= 1 && v[0] == '*' && (len(v) == 1 || unicode.IsSpace(rune(v[1]))) {
		h.seenGlobal = true
	} else if t := productToken(v); t != "" && strings.EqualFold(t, h.agent) {
		h.seenSpecific, h.everSpecific = true, true
	}
}
func (h *delayHandler) HandleAllow(int, string)    { h.seenSeparator = true }
func (h *delayHandler) HandleDisallow(int, string) { h.seenSeparator = true }
func (h *delayHandler) HandleSitemap(int, string)  {}
func (h *delayHandler) HandleUnknownAction(_ int, action, value string) {
	if !strings.EqualFold(strings.TrimSpace(action), "crawl-delay") {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || f < 0 {
		return
	}
	if h.seenSpecific {
		h.specific = max(h.specific, f)
	}
	if h.seenGlobal {
		h.star = max(h.star, f)
	}
}

// productToken is the leading run of RFC 7231 token characters of a
// robots.txt user-agent value, as grobotstxt extracts it.
func productToken(v string) string {
	i := 0
	for ; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("~#$%'*+-.^_`|", c) >= 0) {
			break
		}
	}
	return v[:i]
}
