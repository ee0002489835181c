package robots

import (
	"errors"
	"testing"
	"time"
)

// userAgent is the recorder's default User-Agent (recorder.DefaultUserAgent).
const userAgent = "crawltrace/0.1 (+https://github.com/crawltrace/crawltrace)"

func TestRobotsRules(t *testing.T) {
	body := "User-agent: crawltrace\nDisallow: /x\nCrawl-delay: 2.5\n\nUser-agent: *\nDisallow: /\nCrawl-delay: 9\n"
	r := New(200, body, nil, "crawltrace")
	if r.Allowed("crawltrace", "http://a/x/1") || !r.Allowed("crawltrace", "http://a/y") {
		t.Error("specific group not applied")
	}
	if r.crawlDelay != 2500*time.Millisecond {
		t.Errorf("crawl delay %v", r.crawlDelay)
	}
	if r := New(200, body, nil, "other"); r.Allowed("other", "http://a/y") || r.crawlDelay != 9*time.Second {
		t.Error("star group not applied")
	}
	if !New(404, "", nil, "x").Allowed("x", "http://a/") {
		t.Error("4xx must allow all")
	}
	if New(500, "", nil, "x").Allowed("x", "http://a/") || New(0, "", errors.New("x"), "x").Allowed("x", "http://a/") {
		t.Error("5xx and errors must disallow all")
	}
	if Agent(userAgent) != "crawltrace" {
		t.Errorf("agent %q", Agent(userAgent))
	}
}

// TestCrawlDelayGroup: the Crawl-delay of the group naming the agent
// applies, selected as the robots.txt matcher selects groups.
func TestCrawlDelayGroup(t *testing.T) {
	for _, tc := range []struct {
		body string
		want time.Duration
	}{
		// A group for crawltrace without Crawl-delay wins over "*".
		{"User-agent: *\nCrawl-delay: 9\n\nUser-agent: crawltrace\nDisallow: /x\n", 0},
		// crawltracex is another agent.
		{"User-agent: crawltracex\nCrawl-delay: 5\n\nUser-agent: *\nCrawl-delay: 2\n", 2 * time.Second},
		// A product token with a version names the agent.
		{"User-agent: CrawlTrace/2.0\nCrawl-delay: 3\n\nUser-agent: *\nCrawl-delay: 2\n", 3 * time.Second},
		// Crawl-delay does not end a group: "other" joins crawltrace's.
		{"User-agent: crawltrace\nCrawl-delay: 4\nUser-agent: other\nCrawl-delay: 6\nDisallow: /\n", 6 * time.Second},
		// Disallow ends it.
		{"User-agent: other\nDisallow: /\nUser-agent: crawltrace\nCrawl-delay: 1.5\n", 1500 * time.Millisecond},
		// "* " followed by text is still global.
		{"User-agent: * everyone\nCrawl-delay: 7\n", 7 * time.Second},
		{"User-agent: *\nCrawl-delay: -1\n", 0},
	} {
		if got := crawlDelay(tc.body, "crawltrace"); got != tc.want {
			t.Errorf("%q: crawl delay %v, want %v", tc.body, got, tc.want)
		}
	}
}
