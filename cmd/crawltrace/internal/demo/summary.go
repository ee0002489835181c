package demo

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/replay"
	"github.com/crawltrace/crawltrace/replay/scenario"
)

// Paper figures (Broder, Najork, Wiener 2003, section 4 and 5).
const (
	paperLinksMean       = 62.55
	paperLinksMedian     = 23
	paperUniqueMean      = 42.74
	paperUniqueMedian    = 17
	paperDuplicateShare  = 0.30
	paperLocalFraction   = 0.815
	paperCrossOfAllTrace = 0.195
)

// summaryPowers are the cache sizes (log2) shown in the summary table.
var summaryPowers = []int{0, 4, 8, 12, 16, 20, 25}

func writeSummary(w io.Writer, cfg Config, res *Result) error {
	st := res.Crawl.Stats
	rep := res.Condense
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# crawltrace demo\n\n")
	p("A %d-node crawl of the local synthetic web (%d hosts x %d pages, seed %d), condensed and replayed through %s at cache sizes %s.\n\n",
		cfg.Nodes, cfg.Hosts, cfg.PagesPerHost, cfg.Seed, strings.Join(cfg.Policies, ", "), sizeRange(cfg.Sizes))
	p("## Crawl statistics beside the paper's\n\n")
	p("| | this crawl | Broder et al. 2003 |\n|---|---:|---:|\n")
	p("| fetch attempts | %d | 1.04 billion |\n", st.FetchAttempts)
	p("| HTML pages | %d | 429 million |\n", st.HTMLPages)
	p("| URLs logged at the host splitters | %d | 26.86 billion |\n", st.URLsLogged)
	p("| links per HTML page, mean / median | %.2f / %.0f | %.2f / %d |\n", st.LinksPerPage.Mean, st.LinksPerPage.Median, paperLinksMean, paperLinksMedian)
	p("| unique links per page, mean / median | %.2f / %.0f | %.2f / %d |\n", st.UniqueLinksPerPage.Mean, st.UniqueLinksPerPage.Median, paperUniqueMean, paperUniqueMedian)
	p("| on-page duplicate links | %.1f%% | about %.0f%% |\n", 100*st.OnPageDuplicateShare, 100*paperDuplicateShare)
	p("| URLs staying local at the splitter | %.1f%% | %.1f%% |\n", 100*st.LocalFraction, 100*paperLocalFraction)
	p("| cross subtrace share of all URLs | %.1f%% | %.1f%% |\n", 100*st.CrossFraction, 100*paperCrossOfAllTrace)
	p("| redirects logged | %d | 38 million |\n", st.Redirects)
	p("| robots.txt exclusions | %d | |\n\n", st.RobotsExcluded)
	if st.Deterministic {
		p("The crawl stopped after %.1f s of virtual time: %s. ", st.VirtualSeconds, recorder.StopText(st.StopReason, cfg.MaxPages, cfg.Duration))
		p("It was deterministic: the local web answered in process and the crawl ran on a virtual clock, so the same flags and seed give the same trace and every number above and below, on any machine.\n\n")
	} else {
		p("The crawl stopped after %.1fs: %s. ", st.Seconds, recorder.StopText(st.StopReason, cfg.MaxPages, cfg.Duration))
		p("It was live (--live): its workers raced over loopback, so another run logs other URLs and other numbers.\n\n")
	}

	p("## Condensing\n\n")
	p("%d URLs from %d nodes: %d distinct URLs, %d distinct 64-bit fingerprints, %d colliding pairs (expected %.2g). ",
		rep.Total.Rows, len(rep.PerNode), rep.Total.DistinctURLs, rep.Total.DistinctFPs, rep.Total.CollisionPairs, rep.Total.ExpectedCollisions)
	p("Cross subtrace: %d URLs (%.1f%%).\n\n", rep.Total.CrossRows, 100*float64(rep.Total.CrossRows)/math.Max(1, float64(rep.Total.Rows)))

	rows := res.Replay.Rows
	traces := map[string]bool{}
	for _, r := range rows {
		traces[r.Trace] = true
	}
	var names []string
	for t := range traces {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, tr := range names {
		p("## Miss rate, %s\n\n", tr)
		writeMissTable(w, rows, tr, cfg.Policies)
		cp, ok := criticalPoint(rows, tr)
		if ok {
			p("\nCritical point (LRU): the steepest drop of the miss rate per doubling of the cache is from %d to %d entries (%.3f -> %.3f). ",
				cp.from, cp.to, cp.mrFrom, cp.mrTo)
			if cp.within > 0 {
				p("LRU comes within 5 points of INFINITE (%.3f) at %d entries. ", cp.infinite, cp.within)
			}
			if cp.hit80 > 0 {
				p("The LRU hit rate first reaches 80%% at %d entries (the paper: about 50,000 entries on its 26.86-billion-URL trace).", cp.hit80)
			} else {
				p("The LRU hit rate never reaches 80%% on this trace (the paper reached it at about 50,000 entries).")
			}
			p("\n\n")
		}
	}
	if slices.Contains(cfg.Policies, "static") && len(names) > 0 {
		p("**STATIC.** %s\n\n", staticNote(cfg.ChargeStatic))
	}
	if res.Scenario != nil {
		writeScenario(w, res.Scenario)
	}
	p("## Files\n\n")
	p("- `crawl/`: raw URL and page logs per node, `manifest.json`, `stats.json`\n")
	p("- `condensed/`: `node-NNN.full.arrow`, `node-NNN.cross.arrow`, `report.json`\n")
	p("- `replay/`: `results.csv`, `results.arrow`, `memory.csv`, figures as PNG and SVG (miss rate vs size, relative to MIN, full vs cross)\n")
	if res.Scenario != nil {
		p("- `scenario/`: distributed-crawl what-ifs (partitioning, splitter cache, per-thread caches, node loss, host locality)\n")
	}
	p("\n%s", TimingsHeading)
	p("Wall-clock times of this run on this machine; they vary from run to run")
	if st.Deterministic {
		p(", and nothing above depends on them")
	}
	p(".\n\n")
	p("- crawl: %.1f s, %.0f pages per second\n", st.Seconds, st.PagesPerSecond)
	var stages []string
	for _, s := range []string{"crawl", "condense", "replay", "scenario"} {
		if v, ok := res.StageSecs[s]; ok {
			stages = append(stages, fmt.Sprintf("%s %.1fs", s, v))
		}
	}
	p("- stages: %s\n", strings.Join(stages, ", "))
	return nil
}

// TimingsHeading starts SUMMARY.md's last section, the only one that
// holds wall-clock times: a deterministic demo's SUMMARY.md is the same
// in every run up to it.
const TimingsHeading = "## Timings (this machine)\n\n"

// DeterministicPart is SUMMARY.md's text up to its wall-clock timings:
// the part the same flags and seed reproduce.
func DeterministicPart(summary string) string {
	before, _, _ := strings.Cut(summary, TimingsHeading)
	return before
}

// staticNote says how to read STATIC's row.
func staticNote(charged bool) string {
	if charged {
		return "STATIC's cache is preloaded with the trace's most frequent URLs, and each preload is charged as a miss on its first request (--charge-static)."
	}
	return "STATIC's cache is preloaded with the trace's most frequent URLs, and the preloads are not charged: a preloaded URL hits even on its first request. " +
		"So at large sizes STATIC can miss less than INFINITE, which pays one miss per distinct URL, down to 0 when the cache holds every distinct URL. " +
		"Rerun with --charge-static to count each preload as a miss."
}

func sizeRange(s []int) string {
	if len(s) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d..%d (%d sizes)", s[0], s[len(s)-1], len(s))
}

func writeMissTable(w io.Writer, rows []replay.Row, trace string, policies []string) {
	byKey := map[string]replay.Row{}
	sizes := map[int]bool{}
	for _, r := range rows {
		if r.Trace == trace {
			byKey[fmt.Sprintf("%s/%d", r.Policy, r.Size)] = r
			sizes[r.Size] = true
		}
	}
	var cols []int
	for _, e := range summaryPowers {
		if sizes[1<<e] {
			cols = append(cols, 1<<e)
		}
	}
	fmt.Fprintf(w, "| policy |")
	for _, c := range cols {
		fmt.Fprintf(w, " 2^%d |", int(math.Log2(float64(c))))
	}
	fmt.Fprintf(w, "\n|---|")
	for range cols {
		fmt.Fprintf(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, pol := range policies {
		fmt.Fprintf(w, "| %s |", pol)
		for _, c := range cols {
			if r, ok := byKey[fmt.Sprintf("%s/%d", pol, c)]; ok {
				fmt.Fprintf(w, " %.4f |", r.MissRate)
			} else {
				fmt.Fprintf(w, " |")
			}
		}
		fmt.Fprintln(w)
	}
}

type critical struct {
	from, to     int
	mrFrom, mrTo float64
	within       int
	hit80        int // smallest size with an LRU hit rate >= 80%
	infinite     float64
}

// criticalPoint finds, on the LRU curve of a trace, the doubling of the
// cache size with the largest drop in miss rate, and the smallest size
// within 5 percentage points of INFINITE.
func criticalPoint(rows []replay.Row, trace string) (critical, bool) {
	var lru []replay.Row
	inf := math.NaN()
	for _, r := range rows {
		if r.Trace != trace {
			continue
		}
		switch r.Policy {
		case "lru":
			lru = append(lru, r)
		case "infinite":
			inf = r.MissRate
		}
	}
	if len(lru) < 2 {
		return critical{}, false
	}
	sort.Slice(lru, func(i, j int) bool { return lru[i].Size < lru[j].Size })
	var c critical
	best := -1.0
	for i := 1; i < len(lru); i++ {
		if d := lru[i-1].MissRate - lru[i].MissRate; d > best {
			best = d
			c.from, c.to, c.mrFrom, c.mrTo = lru[i-1].Size, lru[i].Size, lru[i-1].MissRate, lru[i].MissRate
		}
	}
	for _, r := range lru {
		if r.MissRate <= 0.2 {
			c.hit80 = r.Size
			break
		}
	}
	if !math.IsNaN(inf) {
		c.infinite = inf
		for _, r := range lru {
			if r.MissRate <= inf+0.05 {
				c.within = r.Size
				break
			}
		}
	}
	return c, true
}

func f3(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

// writeScenario summarizes the distributed-crawl what-ifs.
func writeScenario(w io.Writer, s *scenario.Summary) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## Distributed-crawl scenarios\n\n")
	p("Replayed from the raw trace (%d URLs, %d hosts, recorded with %d nodes and the %q partitioner), without recrawling.\n\n",
		s.URLs, s.Hosts, s.Nodes, s.Partitioner)
	p("**Partitioning** (cross fraction and host balance max/mean):\n\n| partitioner | N | cross fraction | balance (hosts) |\n|---|---:|---:|---:|\n")
	for _, d := range s.Partition {
		if d.Nodes == 4 || d.Nodes == 16 || d.Nodes == 64 {
			p("| %s | %d | %s | %s |\n", d.Partitioner, d.Nodes, f3(d.CrossFraction), f3(d.BalanceHosts))
		}
	}
	p("\n**Cache in front of the host splitter** (fraction of cross URLs still sent):\n\n| policy | size | sent |\n|---|---:|---:|\n")
	for _, d := range s.SplitterCache {
		if !shownSize(d.Size) && d.Size != 0 {
			continue
		}
		p("| %s | %d | %s |\n", d.Policy, d.Size, f3(d.SentFraction))
	}
	p("\n**Per-thread vs global cache** (open question 2; LRU miss rate):\n\n| total size | workers | global | per-thread |\n|---:|---:|---:|---:|\n")
	for _, d := range s.Threads {
		if !shownSize(d.Size) {
			continue
		}
		p("| %d | %d | %s | %s |\n", d.Size, d.Workers, f3(d.GlobalMissRate), f3(d.ThreadMissRate))
	}
	p("\n**Losing a node** (UbiCrawler's contravariance):\n\n| partitioner | event | hosts moved | URLs fetched twice | balance after |\n|---|---|---:|---:|---:|\n")
	for _, d := range s.NodeLoss {
		p("| %s | %s node %d | %s | %d | %s |\n", d.Partitioner, d.Event, d.Node, f3(d.HostsMovedFraction), d.Refetched, f3(d.BalanceHosts))
	}
	p("\n**Host locality of LRU hits** (open question 3, the paper's explanation of the critical point):\n\n| size | hit rate | hits whose previous occurrence was on a page of the same host |\n|---:|---:|---:|\n")
	for _, d := range s.Locality {
		if !shownSize(d.Size) {
			continue
		}
		p("| %d | %s | %s |\n", d.Size, f3(d.HitRate), f3(d.SameHostFraction))
	}
	p("\n")
}

// shownSize reports whether a cache size is one of the summary's columns.
func shownSize(n int) bool {
	for _, e := range summaryPowers {
		if n == 1<<e {
			return true
		}
	}
	return false
}
