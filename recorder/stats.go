package recorder

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/counters"
	"github.com/crawltrace/crawltrace/internal/progress"
	"github.com/crawltrace/crawltrace/recorder/quality"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// Stats summarizes a crawl; it is written to OutDir/stats.json and returned
// by [Run], and while the crawl runs it is what Config.Metrics serves
// (recorder/monitor): every number here is a metric named crawltrace_ and
// its JSON name, a counter (with _total) for int64 fields and a gauge for
// the others unless its metric tag says otherwise; a map is one metric
// with the tag's label. The stages' counters are embedded, each declared
// once where it is counted (worker.Counters, splitter.Stats): a counter
// added there is in stats.json and the metrics, summed over nodes and
// saved in checkpoints with no edit here. Fractions are of all URLs
// logged by the host splitters. It is a plain value, not safe for
// concurrent mutation.
type Stats struct {
	CrawlID    string  `json:"crawl_id"`
	Nodes      []int   `json:"nodes"` // the nodes run by this process
	StopReason string  `json:"stop_reason"`
	Seconds    float64 `json:"seconds"`
	// Deterministic is set for a crawl of a local web on a virtual clock
	// (Config.Local); VirtualSeconds is then its length on that clock,
	// the same in every run, while Seconds and PagesPerSecond are the
	// wall-clock time this run took and its rate.
	Deterministic  bool    `json:"deterministic,omitempty"`
	VirtualSeconds float64 `json:"virtual_seconds,omitempty"`

	// The workers' counters (fetches, pages, bytes, robots.txt,
	// politeness and caps, charsets), declared and documented once in
	// worker.Counters, summed over nodes.
	worker.Counters[int64]
	ByStatus       map[string]int64 `json:"by_status" metric:"counter,status"`       // HTTP status, "error" when no response
	BytesByStatus  map[string]int64 `json:"bytes_by_status" metric:"counter,status"` // body bytes read, by status as ByStatus
	RobotsByStatus map[string]int64 `json:"robots_by_status" metric:"counter,status"`
	PagesPerSecond float64          `json:"pages_per_second"`

	LinksPerPage         worker.Summary   `json:"links_per_page"`        // over HTML pages, duplicates included
	UniqueLinksPerPage   worker.Summary   `json:"unique_links_per_page"` // distinct links on a page
	OnPageDuplicateShare float64          `json:"on_page_duplicate_fraction"`
	FilterReasons        map[string]int64 `json:"filter_reasons,omitempty" metric:"counter,reason"`
	// QueuePeakBytes is the most bytes of URLs that waited for a host
	// splitter at once; QueueWaits counts the sends that waited for room
	// (back-pressure on fetching).
	QueuePeakBytes int64 `json:"queue_peak_bytes" metric:"gauge"`
	QueueWaits     int64 `json:"queue_waits"`

	// The host splitters' counters (URLs logged, local and cross, the
	// splitter cache, peer batches), declared and documented once in
	// splitter.Stats, summed over nodes.
	splitter.Stats
	LocalFraction float64 `json:"local_fraction"`
	CrossFraction float64 `json:"cross_fraction"`

	DUEUnique      int64   `json:"due_unique" metric:"gauge"`
	DUEBytesPerURL float64 `json:"due_bytes_per_url"`
	// DUE is the duplicate URL eliminator, "memory" or "disk". For the
	// disk DUE: its cache's size, accesses (every URL reaching the DUE),
	// hits and hit rate (hits/accesses), the blocks read from its file,
	// the merges of its buffer into the file and the bytes they read and
	// wrote.
	DUE              string  `json:"due"`
	DUECacheSize     int     `json:"due_cache_size,omitempty"`
	DUECacheAccesses int64   `json:"due_cache_accesses,omitempty"`
	DUECacheHits     int64   `json:"due_cache_hits,omitempty"`
	DUECacheHitRate  float64 `json:"due_cache_hit_rate,omitempty"`
	DUEDiskLookups   int64   `json:"due_disk_lookups,omitempty"`
	DUEMerges        int64   `json:"due_merges,omitempty"`
	DUEMergeBytes    int64   `json:"due_merge_bytes,omitempty"`
	// DUESwitchedAt is the number of URLs the in-memory DUE held when it
	// outgrew a quarter of Config.Memory and gave way to the disk DUE
	// (Config.DUE auto; summed over nodes), 0 when it did not.
	DUESwitchedAt int64 `json:"due_switched_at,omitempty" metric:"gauge"`

	SplitterCacheSize int `json:"splitter_cache_size"`
	// TCP mode: this node's incarnation; batches acknowledged by peers;
	// batches sent again (loaded from the checkpoint's outbox at a
	// restart, or queued again for a restarted peer); batches left
	// unacknowledged in the outbox at the stop (kept in the final
	// checkpoint for --resume).
	Epoch         uint64 `json:"epoch,omitempty"`
	BatchesAcked  int64  `json:"batches_acked"`
	BatchesResent int64  `json:"batches_resent"`
	OutboxLeft    int    `json:"outbox_left"`
	// BatchesRefused counts the requests this node's endpoint refused or
	// turned away for now (peer.HTTPTransport.Refused).
	BatchesRefused int64 `json:"batches_refused"`

	// What waits, as the stats were taken (at the stop, for stats.json):
	// URLs queued in the frontier, hosts known to it, and origins
	// whose robots.txt waits for a retry.
	Queued        int64 `json:"queued" metric:"gauge"`
	HostsKnown    int64 `json:"hosts_known" metric:"gauge"`
	RobotsWaiting int64 `json:"robots_waiting" metric:"gauge"`
	// Hosts with URLs queued that wait for their politeness delay, and
	// hosts due that wait for a worker or a connection.
	HostsPoliteWait int64 `json:"hosts_polite_wait" metric:"gauge"`
	HostsDue        int64 `json:"hosts_due" metric:"gauge"`

	// MaxStallSeconds is the longest any host waited, in this run,
	// between becoming due (its politeness delay passed with something to
	// fetch whose origin's robots.txt allows it now) and a worker taking
	// it: time lost to busy workers, the connection cap or a schedule that
	// held the host back. A host whose origin waits for a robots.txt retry
	// is not due for that origin's URLs. MaxStallHost is that host.
	MaxStallSeconds float64 `json:"max_stall_seconds"`
	MaxStallHost    string  `json:"max_stall_host,omitempty"`

	Order     string `json:"order"`
	MaxConns  int    `json:"max_conns"`  // the per-node cap
	PeakConns int    `json:"peak_conns"` // most connections one node had open at once
	// Sessions counts connection sessions: a server's connection from its
	// opening to its close (a reconnect the transport makes inside a
	// session, after a silent close, is not counted).
	Sessions int64 `json:"sessions"`
	// Frontier spilling (Config.Memory): bytes of URLs written to and
	// read back from the frontier's disk store, and the bytes of URLs
	// queued in memory at the end.
	FrontierSpillWritten int64 `json:"frontier_spill_written_bytes"`
	FrontierSpillRead    int64 `json:"frontier_spill_read_bytes"`
	FrontierMemBytes     int64 `json:"frontier_mem_bytes" metric:"gauge"`
	// PeakRSSBytes is the crawling process's peak resident memory over
	// this run (VmHWM; 0 where the system does not say): for a crawl run
	// as its own process, what Config.Memory bounds. A library caller's
	// process counts whatever else it holds.
	PeakRSSBytes int64 `json:"peak_rss_bytes,omitempty" metric:"gauge"`
	// Checkpoints taken by this run (periodic and final) and how long the
	// last periodic one took.
	Checkpoints       int     `json:"checkpoints"`
	CheckpointSeconds float64 `json:"checkpoint_seconds"`
	// Resumes counts the restarts of the crawl (--resume). A restart after
	// a crash cuts the logs back to the last checkpoint: DiscardedPages and
	// DiscardedURLs count the rows cut (kept under
	// node-NNN/state/discarded/); those pages may have been fetched again.
	// Counters above cover the whole crawl, restarts included; a page
	// fetched again is counted again.
	Resumes        int64 `json:"resumes"`
	DiscardedPages int64 `json:"discarded_pages"`
	DiscardedURLs  int64 `json:"discarded_urls"`
	// WARC (Config.WARC): the records and bytes on disk of every node's
	// WARC series, over the whole crawl (a resume's cut bytes, kept under
	// state/discarded/, are DiscardedWARCBytes, not counted here), and the
	// most bytes of exchanges waiting to be written at once.
	WARCRecords        int64 `json:"warc_records,omitempty"`
	WARCResponses      int64 `json:"warc_responses,omitempty"`
	WARCBytes          int64 `json:"warc_bytes,omitempty"`
	WARCFiles          int64 `json:"warc_files,omitempty"`
	WARCQueuePeakBytes int64 `json:"warc_queue_peak_bytes,omitempty"`
	DiscardedWARCBytes int64 `json:"discarded_warc_bytes,omitempty"`
	// Progress: pages and quality fetched over the crawl's time.
	Progress *quality.Progress `json:"progress,omitempty"`
}

func codeKey(code int) string {
	if code == 0 {
		return "error"
	}
	return strconv.Itoa(code)
}

// collect takes the crawl's stats. A live collect (while the crawl runs,
// for its metrics) leaves out what costs a pass over every page fetched:
// the links-per-page summaries and the progress timeline.
func (c *crawl) collect(nodes []*node, elapsed time.Duration, peerStats func(*Stats), live bool) *Stats {
	s := &Stats{CrawlID: c.cfg.CrawlID, Seconds: elapsed.Seconds(),
		ByStatus: map[string]int64{}, BytesByStatus: map[string]int64{}, RobotsByStatus: map[string]int64{}, SplitterCacheSize: c.cfg.SplitterCache, DUE: DUEMemory}
	var links, unique []uint32
	var dueBytes int64
	var timeline []quality.Fetch
	var t0 time.Time
	for _, n := range nodes {
		if t0.IsZero() || n.started.Before(t0) {
			t0 = n.started
		}
	}
	s.Order = c.cfg.Order
	for _, n := range nodes {
		if n.conns != nil {
			s.MaxConns = n.conns.Max()
			s.PeakConns = max(s.PeakConns, n.conns.PeakOpen())
		}
	}
	for _, n := range nodes {
		s.Nodes = append(s.Nodes, n.id)
		d := n.st.Snapshot()
		counters.Add(&s.Counters, d.Counters)
		fr := n.front.Snapshot()
		s.FrontierSpillWritten += fr.Spill.Written
		s.FrontierSpillRead += fr.Spill.Read
		s.FrontierMemBytes += fr.MemBytes
		pk, wt := n.queue.Stats()
		s.QueuePeakBytes = max(s.QueuePeakBytes, pk)
		s.QueueWaits += wt
		for k, v := range d.ByStatus {
			s.ByStatus[codeKey(k)] += v
		}
		for k, v := range d.BytesByStatus {
			s.BytesByStatus[codeKey(k)] += v
		}
		for k, v := range d.RobotsByStatus {
			s.RobotsByStatus[codeKey(k)] += v
		}
		for k, v := range d.FilterReasons {
			if s.FilterReasons == nil {
				s.FilterReasons = map[string]int64{}
			}
			s.FilterReasons[k] += v
		}
		if !live {
			links = append(links, d.Links...)
			unique = append(unique, d.Unique...)
			for _, p := range d.Timeline {
				timeline = append(timeline, quality.Fetch{End: p.At + n.started.Sub(t0), Quality: p.Q})
			}
		}
		s.Resumes = max(s.Resumes, n.resume.Resumes)
		s.DiscardedPages += n.resume.DiscardedPages
		s.DiscardedURLs += n.resume.DiscardedURLs
		s.DiscardedWARCBytes += n.resume.DiscardedWARCBytes
		if n.warc != nil {
			ws := n.warc.Stats()
			s.WARCRecords += ws.Records
			s.WARCResponses += ws.Responses
			s.WARCBytes += ws.Bytes
			s.WARCFiles += ws.Files
			pk, _ := n.warc.QueueStats()
			s.WARCQueuePeakBytes = max(s.WARCQueuePeakBytes, pk)
		}
		// The splitter's state, as its goroutine published it (final once
		// it has stopped).
		sp := n.split.Published()
		counters.Add(&s.Stats, sp.Stats)
		s.DUEUnique += sp.DUELen
		s.Sessions += fr.Sessions
		s.Queued += int64(fr.Queued)
		s.HostsKnown += int64(fr.Hosts)
		s.RobotsWaiting += int64(fr.RobotsWaiting)
		s.HostsPoliteWait += int64(fr.HostsPolite)
		s.HostsDue += int64(fr.HostsDue)
		if fr.Stall.Seconds() > s.MaxStallSeconds {
			s.MaxStallSeconds, s.MaxStallHost = fr.Stall.Seconds(), fr.StallHost
		}
		dueBytes += sp.DUEBytes
		if sp.DUEDisk {
			s.DUE = DUEDisk
			s.DUECacheSize = sp.DUECacheSize
			s.DUECacheAccesses += sp.DUEStats.CacheAccesses
			s.DUECacheHits += sp.DUEStats.CacheHits
			s.DUEDiskLookups += sp.DUEStats.DiskLookups
			s.DUEMerges += sp.DUEStats.Merges
			s.DUEMergeBytes += sp.DUEStats.MergeBytes
		}
		s.DUESwitchedAt += sp.DUESwitched
	}
	s.LinksPerPage = worker.Summarize(links)
	s.UniqueLinksPerPage = worker.Summarize(unique)
	var sl, su float64
	for i := range links {
		sl += float64(links[i])
		su += float64(unique[i])
	}
	if sl > 0 {
		s.OnPageDuplicateShare = 1 - su/sl
	}
	if s.URLsLogged > 0 {
		s.LocalFraction = float64(s.Local) / float64(s.URLsLogged)
		s.CrossFraction = float64(s.Cross) / float64(s.URLsLogged)
	}
	if s.DUECacheAccesses > 0 {
		s.DUECacheHitRate = float64(s.DUECacheHits) / float64(s.DUECacheAccesses)
	}
	if s.DUEUnique > 0 {
		s.DUEBytesPerURL = float64(dueBytes) / float64(s.DUEUnique)
	}
	if elapsed > 0 {
		s.PagesPerSecond = float64(s.FetchAttempts) / elapsed.Seconds()
	}
	if peerStats != nil {
		peerStats(s)
	}
	if !live {
		s.Progress = quality.SummarizeProgress(timeline, elapsed, c.cfg.Quality != nil, quality.Total(c.cfg.Quality))
	}
	return s
}

// WriteText prints s for a person, one fact per line.
func (s *Stats) WriteText(w io.Writer) {
	fmt.Fprintf(w, "stopped:            %s after %.1fs (nodes %v)\n", s.StopReason, s.Seconds, s.Nodes)
	if s.Deterministic {
		fmt.Fprintf(w, "deterministic:      %.1fs of virtual time (the local web in process)\n", s.VirtualSeconds)
	}
	fmt.Fprintf(w, "fetch attempts:     %d (%.1f pages/s), errors %d\n", s.FetchAttempts, s.PagesPerSecond, s.FetchErrors)
	fmt.Fprintf(w, "by status:          %s\n", fmtCounts(s.ByStatus))
	fmt.Fprintf(w, "html pages:         %d, bytes %d, truncated %d\n", s.HTMLPages, s.Bytes, s.Truncated)
	fmt.Fprintf(w, "links per page:     mean %.2f, median %.1f\n", s.LinksPerPage.Mean, s.LinksPerPage.Median)
	fmt.Fprintf(w, "unique per page:    mean %.2f, median %.1f (on-page duplicates %.1f%%)\n",
		s.UniqueLinksPerPage.Mean, s.UniqueLinksPerPage.Median, 100*s.OnPageDuplicateShare)
	fmt.Fprintf(w, "redirects:          %d\n", s.Redirects)
	fmt.Fprintf(w, "robots.txt:         %d fetched (%s), %d URLs excluded\n", s.RobotsFetches, fmtCounts(s.RobotsByStatus), s.RobotsExcluded)
	fmt.Fprintf(w, "filtered:           %d, bad links %d, dropped by --max-links-per-page %d\n", s.Filtered, s.BadLinks, s.LinksDropped)
	fmt.Fprintf(w, "politeness, caps:   robots.txt %d redirects, %d refetches, %d retries; %d redirects cut, %d non-HTML bodies skipped, %d encoding errors\n",
		s.RobotsRedirects, s.RobotsRefetches, s.RobotsRetries, s.RedirectsCut, s.NotHTMLSkipped, s.EncodingErrors)
	fmt.Fprintf(w, "retry-after:        %d responses heeded, %d URLs tried again\n", s.RetryAfterWaits, s.RetryAfterRetries)
	fmt.Fprintf(w, "page charsets:      %d pages decoded from another encoding than UTF-8, %d with an unknown charset (read as windows-1252)\n", s.NonUTF8Pages, s.CharsetUnknownPages)
	fmt.Fprintf(w, "urls logged:        %d (local %.1f%%, cross %.1f%%)\n", s.URLsLogged, 100*s.LocalFraction, 100*s.CrossFraction)
	fmt.Fprintf(w, "due:                %d unique URLs, %.1f bytes/URL\n", s.DUEUnique, s.DUEBytesPerURL)
	if s.DUE == DUEDisk {
		fmt.Fprintf(w, "disk due:           cache %d entries, hit rate %.4f (%d/%d), %d merges moving %d bytes, %d block reads\n",
			s.DUECacheSize, s.DUECacheHitRate, s.DUECacheHits, s.DUECacheAccesses, s.DUEMerges, s.DUEMergeBytes, s.DUEDiskLookups)
	}
	if s.SplitterCacheSize > 0 {
		fmt.Fprintf(w, "splitter cache:     %d entries: %d sent, %d suppressed\n", s.SplitterCacheSize, s.SplitterCacheSent, s.SplitterCacheSuppressed)
	}
	fmt.Fprintf(w, "order:              %s, %d connection sessions, %d open at most (cap %d)\n", s.Order, s.Sessions, s.PeakConns, s.MaxConns)
	fmt.Fprintf(w, "longest stall:      %.2fs (%s)\n", s.MaxStallSeconds, s.MaxStallHost)
	if p := s.Progress; p != nil && len(p.TimeToPages) > 1 {
		fmt.Fprintf(w, "progress:           50%% of pages after %.2fs", p.TimeToPages[1].Seconds)
		if len(p.TimeToQuality) > 1 {
			fmt.Fprintf(w, ", 50%% of quality after %.2fs (%.1f%% of the oracle's quality fetched)",
				p.TimeToQuality[1].Seconds, 100*p.Quality/max(p.OracleQuality, 1e-300))
		}
		fmt.Fprintln(w)
	}
	if s.WARCRecords > 0 {
		fmt.Fprintf(w, "warc:               %d records (%d responses), %d bytes in %d files\n", s.WARCRecords, s.WARCResponses, s.WARCBytes, s.WARCFiles)
	}
	if s.BatchesSent > 0 || s.BatchesReceived > 0 {
		fmt.Fprintf(w, "peer batches:       %d sent (%d URLs), %d received (%d URLs)\n", s.BatchesSent, s.URLsSent, s.BatchesReceived, s.URLsReceived)
	}
	if s.Epoch > 0 {
		fmt.Fprintf(w, "incarnation:        epoch %d: %d batches acknowledged, %d resent, %d left in the outbox\n", s.Epoch, s.BatchesAcked, s.BatchesResent, s.OutboxLeft)
	}
}

func fmtCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// progress reports the crawl's progress to cfg.Progress until done closes.
func (c *crawl) progress(nodes []*node, _ time.Time, done chan struct{}) {
	if c.cfg.Progress == nil {
		return
	}
	rep := progress.New(c.cfg.Progress, "crawl", "pages", c.cfg.MaxPages)
	t := time.NewTicker(c.cfg.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			rep.Finish()
			return
		case <-t.C:
		}
		var pages, excl, warcBytes int64
		var queued, hosts, retrying int
		warc := false
		for _, n := range nodes {
			st := n.st.Counts()
			pages += st.FetchAttempts
			excl += st.RobotsExcluded
			if n.warc != nil {
				warc = true
				warcBytes += n.warc.Stats().Bytes
			}
			fr := n.front.Snapshot()
			queued += fr.Queued
			hosts += fr.Hosts
			retrying += fr.RobotsWaiting
		}
		line := fmt.Sprintf("queued %d, hosts %d, robots-excluded %d", queued, hosts, excl)
		if retrying > 0 {
			line += fmt.Sprintf(", origins awaiting a robots.txt retry %d", retrying)
		}
		if warc {
			line += fmt.Sprintf(", warc %.1f MB", float64(warcBytes)/1e6)
		}
		rep.Update(pages, line)
	}
}
