package worker

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/counters"
)

// Count is the type of one counter: atomic.Int64 in the live [Stats],
// int64 in a snapshot.
type Count interface{ int64 | atomic.Int64 }

// Counters are a node's worker-side counters, declared once: the live
// ones are a [Stats]'s Counters[atomic.Int64], a snapshot and
// recorder.Stats (stats.json, the metrics) hold Counters[int64], and the
// sum over nodes and the checkpoint follow from the fields by their JSON
// names (internal/counters). A counter added here is in all of them; it
// is incremented where it is counted. The JSON names are stats.json's.
type Counters[T Count] struct {
	// FetchAttempts counts page fetches (robots.txt excluded),
	// RobotsFetches robots.txt requests (hops included), RobotsExcluded
	// URLs robots.txt disallowed.
	FetchAttempts  T `json:"fetch_attempts"`
	RobotsFetches  T `json:"robots_fetches"`
	RobotsExcluded T `json:"robots_excluded"`
	// RobotsBytes counts the body bytes of robots.txt read (hops
	// included, at most 512 KiB a file), as Bytes counts pages'.
	RobotsBytes T `json:"robots_bytes"`
	// FetchErrors counts fetches with no response.
	FetchErrors T `json:"fetch_errors"`
	// HTMLPages counts HTML pages read for links; Bytes the body bytes
	// read; Truncated bodies cut at the size limit (--max-body);
	// Redirects redirects with a usable Location.
	HTMLPages T `json:"html_pages"`
	Bytes     T `json:"bytes"`
	Truncated T `json:"truncated"`
	Redirects T `json:"redirects"`
	// Filtered counts links and redirect targets the URL filter dropped
	// (by reason in filter_reasons), BadLinks those that did not
	// normalize, LinksDropped links past the per-page limit
	// (--max-links-per-page), neither logged nor followed.
	Filtered     T `json:"filtered"`
	BadLinks     T `json:"bad_links"`
	LinksDropped T `json:"links_dropped"`
	// Politeness and caps: RobotsRedirects counts robots.txt redirect
	// hops queued, RobotsRefetches robots.txt fetched again after
	// RobotsTTL for an origin whose earlier rules allowed something,
	// RobotsRetries retries of a robots.txt fetch scheduled after a 5xx or
	// network error (both as [robots.Policy.Date] reports); RedirectsCut
	// redirects not followed past the chain limit, NotHTMLSkipped bodies
	// not read as not HTML, EncodingErrors bodies whose Content-Encoding
	// could not be decoded.
	RobotsRedirects T `json:"robots_redirects"`
	RobotsRefetches T `json:"robots_refetches"`
	RobotsRetries   T `json:"robots_retries"`
	RedirectsCut    T `json:"redirects_cut"`
	NotHTMLSkipped  T `json:"not_html_skipped"`
	EncodingErrors  T `json:"encoding_errors"`
	// Servers that asked to come back later: RetryAfterWaits counts 429
	// and 503 responses whose Retry-After made their server wait
	// (robots.txt included), RetryAfterRetries the URLs so answered that
	// were queued to be tried again.
	RetryAfterWaits   T `json:"retry_after_waits"`
	RetryAfterRetries T `json:"retry_after_retries"`
	// Page charsets: NonUTF8Pages counts HTML pages decoded from an
	// encoding other than UTF-8 into other text than UTF-8 gives
	// ([extract.Stats.Transcoded]: a pure-ASCII page read as windows-1252
	// is not one), CharsetUnknownPages pages that declared only charsets
	// that are not encodings (read as windows-1252).
	NonUTF8Pages        T `json:"non_utf8_pages"`
	CharsetUnknownPages T `json:"charset_unknown_pages"`
}

// Stats are a node's worker-side statistics, safe for concurrent use.
// The caller owns them: it hands them to [New], and reads them for its
// report and its checkpoints as a [Snapshot] (or, for the counters alone,
// [Stats.Counts]).
type Stats struct {
	Counters[atomic.Int64]

	// PageSeq is the number of the node's last page id (a page id is the
	// node id << 40 | its number); checkpoints save it with the counters.
	PageSeq atomic.Uint64

	mu sync.Mutex
	d  Detail
}

// Detail is the part of [Stats] kept under its lock: counts by status and
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

// Snapshot is a copy of a [Stats] taken at one time: its counters (each
// loaded atomically) and its detail. The maps are copies; Links, Unique
// and Timeline share the live slices' elements as they were (the workers
// only append), so a snapshot costs no pass over the pages; they must not
// be written to.
type Snapshot struct {
	Counters[int64]
	Detail
}

// Counts is a snapshot of s's counters alone, without its lock.
func (s *Stats) Counts() Counters[int64] {
	return counters.Load[Counters[int64]](&s.Counters)
}

// Snapshot is a copy of s (see [Snapshot]).
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	d := Detail{
		ByStatus: maps.Clone(s.d.ByStatus), RobotsByStatus: maps.Clone(s.d.RobotsByStatus),
		BytesByStatus: maps.Clone(s.d.BytesByStatus), FilterReasons: maps.Clone(s.d.FilterReasons),
		Links: slices.Clip(s.d.Links), Unique: slices.Clip(s.d.Unique), Timeline: slices.Clip(s.d.Timeline),
	}
	s.mu.Unlock()
	return Snapshot{Counters: s.Counts(), Detail: d}
}

// Restore sets s's counters and counts by status and reason to v's (a
// checkpoint's), keeping its per-page figures.
func (s *Stats) Restore(v Snapshot) {
	counters.Store(&s.Counters, v.Counters)
	s.mu.Lock()
	s.d.ByStatus, s.d.RobotsByStatus = maps.Clone(v.ByStatus), maps.Clone(v.RobotsByStatus)
	s.d.BytesByStatus, s.d.FilterReasons = maps.Clone(v.BytesByStatus), maps.Clone(v.FilterReasons)
	s.mu.Unlock()
}

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
