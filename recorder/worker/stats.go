package worker

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Stats are a node's worker-side counters, safe for concurrent use. The
// caller owns them: it hands them to [New], reads them for its report and
// saves them in its checkpoints ([Stats.Counters], [Stats.Lock]).
type Stats struct {
	// Attempts counts page fetches (robots.txt excluded), RobotsFetches
	// robots.txt requests (hops included), RobotsExcluded URLs robots.txt
	// disallowed.
	Attempts, RobotsFetches, RobotsExcluded atomic.Int64
	// HTML counts HTML pages read for links; Bytes the body bytes read;
	// Truncated bodies cut at the size limit; Redirects redirects with a
	// usable Location.
	HTML, Bytes, Truncated, Redirects atomic.Int64
	// Filtered counts links and redirect targets the URL filter dropped,
	// BadLinks those that did not resolve, FetchErrors failed fetches.
	Filtered, BadLinks, FetchErrors atomic.Int64
	// LinksDropped counts links past the per-page limit.
	LinksDropped atomic.Int64

	// RobotsRedirects counts robots.txt redirect hops queued,
	// RobotsRefetches robots.txt fetched again for an origin whose
	// earlier rules allowed something, RobotsRetries retries of a failed
	// robots.txt fetch scheduled (both as [robots.Policy.Date] reports).
	RobotsRedirects, RobotsRefetches, RobotsRetries atomic.Int64
	// RetryAfterWaits counts 429 and 503 responses whose Retry-After
	// made their server wait (robots.txt included), RetryAfterRetries
	// the URLs so answered that were queued again.
	RetryAfterWaits, RetryAfterRetries atomic.Int64
	// RedirectsCut counts redirects past the chain limit, NotHTML bodies
	// skipped as not HTML, EncodingErrors bodies that failed to decode.
	RedirectsCut, NotHTML, EncodingErrors atomic.Int64

	// NonUTF8 counts HTML pages decoded from an encoding other than
	// UTF-8 into other text than UTF-8 gives ([extract.Stats.Transcoded]:
	// a pure-ASCII page read as windows-1252 is not one), CharsetUnknown
	// pages that declared only unknown charsets.
	NonUTF8, CharsetUnknown atomic.Int64

	// PageSeq is the number of the node's last page id (a page id is the
	// node id << 40 | its number); checkpoints save it with the counters.
	PageSeq atomic.Uint64

	mu sync.Mutex
	d  Detail
}

// Detail is the part of [Stats] kept under a lock: counts by status and
// reason, and per-page figures.
type Detail struct {
	// ByStatus and RobotsByStatus count pages and robots.txt requests
	// by status code (0: no response); FilterReasons counts filtered
	// URLs by the filter's reason. Each is nil until its first count.
	ByStatus, RobotsByStatus map[int]int64
	// BytesByStatus counts the body bytes read of pages by status code.
	BytesByStatus map[int]int64
	FilterReasons map[string]int64
	// Links and Unique are the links and distinct links of each HTML
	// page, in the order they were read.
	Links, Unique []uint32
	// Timeline holds every page fetch (robots.txt excluded).
	Timeline []Point
}

// Point is one page fetch: when it ended, measured from the start of the
// workers ([Options.Start]), and its quality (NaN without an oracle).
type Point struct {
	At time.Duration
	Q  float64
}

// Counters names every atomic counter of s, for checkpoints: a counter
// missing here would restart from zero on resume (a test checks that
// every atomic.Int64 field is listed). The names are those the
// checkpoints of earlier versions saved.
func (s *Stats) Counters() map[string]*atomic.Int64 {
	return map[string]*atomic.Int64{
		"attempts": &s.Attempts, "robots_fetches": &s.RobotsFetches, "robots_excluded": &s.RobotsExcluded,
		"html": &s.HTML, "bytes": &s.Bytes, "truncated": &s.Truncated, "redirects": &s.Redirects,
		"filtered": &s.Filtered, "bad_links": &s.BadLinks, "fetch_errors": &s.FetchErrors,
		"links_dropped": &s.LinksDropped, "robots_redirects": &s.RobotsRedirects,
		"robots_refetches": &s.RobotsRefetches, "robots_retries": &s.RobotsRetries,
		"redirects_cut": &s.RedirectsCut, "not_html": &s.NotHTML, "encoding_errors": &s.EncodingErrors,
		"non_utf8_pages": &s.NonUTF8, "charset_unknown_pages": &s.CharsetUnknown,
		"retry_after_waits": &s.RetryAfterWaits, "retry_after_retries": &s.RetryAfterRetries,
	}
}

// Lock locks the detail of s and returns it, to be read or replaced until
// [Stats.Unlock].
func (s *Stats) Lock() *Detail {
	s.mu.Lock()
	return &s.d
}

// Unlock unlocks the detail locked by [Stats.Lock].
func (s *Stats) Unlock() { s.mu.Unlock() }

func (s *Stats) status(m *map[int]int64, code int) {
	s.mu.Lock()
	if *m == nil {
		*m = make(map[int]int64)
	}
	(*m)[code]++
	s.mu.Unlock()
}

// page counts a page of status code whose body had n bytes.
func (s *Stats) page(code int, n int64) {
	s.mu.Lock()
	if s.d.ByStatus == nil {
		s.d.ByStatus = make(map[int]int64)
	}
	if s.d.BytesByStatus == nil {
		s.d.BytesByStatus = make(map[int]int64)
	}
	s.d.ByStatus[code]++
	s.d.BytesByStatus[code] += n
	s.mu.Unlock()
}

func (s *Stats) filtered(reason string) {
	s.Filtered.Add(1)
	s.mu.Lock()
	if s.d.FilterReasons == nil {
		s.d.FilterReasons = make(map[string]int64)
	}
	s.d.FilterReasons[reason]++
	s.mu.Unlock()
}

// Summary is the mean and median of a per-page count (links per page,
// unique links per page).
type Summary struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
}

// Summarize is the mean and median of xs (zero for none).
func Summarize(xs []uint32) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := append([]uint32(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	m := len(s) / 2
	med := float64(s[m])
	if len(s)%2 == 0 {
		med = (float64(s[m-1]) + float64(s[m])) / 2
	}
	return Summary{Mean: sum / float64(len(s)), Median: med}
}
