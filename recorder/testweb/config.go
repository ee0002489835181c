package testweb

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// Config describes a synthetic web. Start from [DefaultConfig] and change
// fields: for the behaviour fractions (TrapHosts, RobotsFraction,
// RedirectFraction, ...) zero means "none", while the shape parameters whose
// zero value is meaningless (LinksMedian, LinksMean, MaxLinks, PoolSize,
// LatencyMedian, ConnectMedian, QualityModel) fall back to their defaults.
type Config struct {
	// Hosts is the number of generated hosts, named h0001.test, h0002.test,
	// ... (wider numbers when there are more than 9999). Trap hosts and
	// Sites come in addition.
	Hosts int
	// PagesPerHost is the number of HTML pages of each generated host,
	// including its home page "/" (page 0); pages 1.. are /p/ID.html.
	PagesPerHost int
	// Seed selects the web: the same Config produces the same bytes.
	Seed int64
	// Sites maps extra virtual host names to directories of static files
	// (a mirror of a real site), served with index.html for directories.
	Sites map[string]string
	// TrapHosts is the number of crawler-trap hosts trap1.test, trap2.test,
	// ...: an infinite calendar (/cal/2024/01 links to the next month
	// forever) and an infinitely deep path /a/a/a/.../.
	TrapHosts int

	// RobotsFraction of the generated hosts serve a robots.txt with
	// Disallow rules (/private/ and the query variants of /p/ pages);
	// CrawlDelayFraction of those also carry "Crawl-delay: CrawlDelay"
	// (seconds, may be fractional or zero).
	RobotsFraction     float64
	CrawlDelayFraction float64
	CrawlDelay         float64
	// RedirectFraction of the pages (never a home page) answer 301 or 302
	// with a Location header, some of them relative, some to another host.
	RedirectFraction float64
	// ErrorFraction of the pages answer 404 (70%), 500 (20%) or 503 (10%).
	ErrorFraction float64
	// GzipFraction of the generated hosts compress responses when the
	// client sends Accept-Encoding: gzip.
	GzipFraction float64

	// LinksMedian and LinksMean shape the log-normal number of links per
	// page (the paper: median 23, mean 62.55); MaxLinks caps it.
	LinksMedian float64
	LinksMean   float64
	MaxLinks    int
	// DuplicateProb is the probability that a content link repeats a link
	// already on the page (defaults give about 30% on-page duplicates).
	DuplicateProb float64
	// SameHostProb is the probability that a new content link points to the
	// page's own host (defaults give about 80% same-host links overall).
	SameHostProb float64
	// SharedProb is the probability that a page carries its host's shared
	// links (navigation bar and footer: stylesheet, script, logo, home page,
	// popular pages, partner sites), which make a host's pages link to the
	// same URLs. PoolSize is the mean size of that pool.
	SharedProb float64
	PoolSize   int

	// Latency turns on per-host response-time distributions: every host has
	// a mean response time drawn log-normally around LatencyMedian, and a
	// connection setup time around ConnectMedian charged to the first
	// request of each connection (only when the server counts connections,
	// see [Web.ConnContext]). Off by default so tests run fast.
	Latency       bool
	LatencyMedian time.Duration
	ConnectMedian time.Duration
	// KeepAliveLimits makes hosts close persistent connections after a
	// per-host number of requests (24% of hosts after 1, 66% after 100, the
	// rest in between, as measured by Cao, Jiang and Singh), by answering
	// with "Connection: close". Needs [Web.ConnContext] on the server, which
	// [Serve] installs.
	KeepAliveLimits bool

	// QualityModel selects the quality oracle of [Web.Quality]: "pagerank"
	// (PageRank of the generated link graph) or "zipf" (Zipf(1) values
	// assigned to pages at random).
	QualityModel string
}

// DefaultConfig returns a small web with the link statistics of Broder,
// Najork and Wiener's crawl: 100 hosts of 100 pages, two trap hosts, a few
// percent redirects and errors, robots.txt on 30% of hosts, no latency.
func DefaultConfig() Config {
	return Config{
		Hosts:              100,
		PagesPerHost:       100,
		Seed:               1,
		TrapHosts:          2,
		RobotsFraction:     0.3,
		CrawlDelayFraction: 0.3,
		CrawlDelay:         0.01,
		RedirectFraction:   0.03,
		ErrorFraction:      0.03,
		GzipFraction:       0.5,
		LinksMedian:        23,
		LinksMean:          62.55,
		MaxLinks:           10000,
		DuplicateProb:      0.28,
		SameHostProb:       0.76,
		SharedProb:         0.9,
		PoolSize:           16,
		LatencyMedian:      20 * time.Millisecond,
		ConnectMedian:      10 * time.Millisecond,
		QualityModel:       "pagerank",
	}
}

// withDefaults fills the shape parameters whose zero value is meaningless
// and validates the rest.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	// cmp.Or keeps a field that is set and takes the default for a zero one.
	c.LinksMedian = cmp.Or(c.LinksMedian, d.LinksMedian)
	c.LinksMean = cmp.Or(c.LinksMean, d.LinksMean)
	c.MaxLinks = cmp.Or(c.MaxLinks, d.MaxLinks)
	c.PoolSize = cmp.Or(c.PoolSize, d.PoolSize)
	c.LatencyMedian = cmp.Or(c.LatencyMedian, d.LatencyMedian)
	c.ConnectMedian = cmp.Or(c.ConnectMedian, d.ConnectMedian)
	c.QualityModel = cmp.Or(c.QualityModel, d.QualityModel)
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Hosts < 0 || c.Hosts > 9_999_999 {
		bad("testweb: hosts %d out of range [0, 9999999]", c.Hosts)
	}
	if c.Hosts == 0 && c.TrapHosts == 0 && len(c.Sites) == 0 {
		bad("testweb: the web has no hosts (hosts, trap hosts and sites are all zero)")
	}
	if c.Hosts > 0 && (c.PagesPerHost < 1 || c.PagesPerHost > 1<<30) {
		bad("testweb: pages per host %d out of range [1, 2^30]", c.PagesPerHost)
	}
	if c.Hosts > 0 && int64(c.Hosts)*int64(c.PagesPerHost) > 1<<40 {
		bad("testweb: hosts x pages per host too large")
	}
	if c.TrapHosts < 0 || c.TrapHosts > 1000 {
		bad("testweb: trap hosts %d out of range [0, 1000]", c.TrapHosts)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"robots fraction", c.RobotsFraction}, {"crawl-delay fraction", c.CrawlDelayFraction},
		{"redirect fraction", c.RedirectFraction}, {"error fraction", c.ErrorFraction},
		{"gzip fraction", c.GzipFraction}, {"duplicate probability", c.DuplicateProb},
		{"same-host probability", c.SameHostProb}, {"shared probability", c.SharedProb},
	} {
		if !(f.v >= 0 && f.v <= 1) {
			bad("testweb: %s %v out of range [0, 1]", f.name, f.v)
		}
	}
	if c.RedirectFraction+c.ErrorFraction > 1 {
		bad("testweb: redirect fraction + error fraction %v exceeds 1", c.RedirectFraction+c.ErrorFraction)
	}
	if c.DuplicateProb >= 0.99 {
		bad("testweb: duplicate probability %v must be below 0.99", c.DuplicateProb)
	}
	if !(c.CrawlDelay >= 0 && c.CrawlDelay <= 3600) {
		bad("testweb: crawl delay %v out of range [0, 3600] seconds", c.CrawlDelay)
	}
	if !(c.LinksMedian >= 1) || !(c.LinksMean >= c.LinksMedian) || math.IsInf(c.LinksMean, 0) {
		bad("testweb: links median %v and mean %v must satisfy 1 <= median <= mean", c.LinksMedian, c.LinksMean)
	}
	if c.MaxLinks < 1 || c.MaxLinks > 1_000_000 {
		bad("testweb: max links %d out of range [1, 1000000]", c.MaxLinks)
	}
	if c.PoolSize < 1 || c.PoolSize > 1000 {
		bad("testweb: pool size %d out of range [1, 1000]", c.PoolSize)
	}
	if c.LatencyMedian < 0 || c.ConnectMedian < 0 {
		bad("testweb: negative latency")
	}
	if c.QualityModel != "pagerank" && c.QualityModel != "zipf" {
		bad("testweb: quality model %q: want pagerank or zipf", c.QualityModel)
	}
	if len(errs) > 0 {
		return c, errs[0] // one clear line; the rest usually follow from it
	}
	return c, nil
}
