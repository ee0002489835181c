// Package quality measures how good a crawl order is: how early a crawl
// gathers its pages, and how early it gathers the pages that matter.
//
// # Quality of a crawl order
//
// Cao, Jiang and Singh's two-level scheduler orders a crawl by a page-quality
// oracle: "quality" serves each server's URLs best quality first and ranks
// servers by their best queued URL, "capability" ranks servers by the
// summed quality of their next URLs per expected time (see
// recorder/frontier). Every order eventually fetches the same pages; what
// tells them apart is the time at which the pages, and the oracle's
// quality, arrive. A crawl's quality at time t is the summed oracle value
// of the pages fetched by t; the curves of pages and of quality against
// time are the measures of their Figures 6 and 7 (capability-based
// ordering got 80% of the total quality in less than 30% of the time).
//
// # The oracle file
//
// [ReadOracle] and [ParseOracle] read an oracle, one page per line:
//
//	# comment lines and blank lines are skipped
//	http://h0001.test/p/17.html<TAB>0.00731
//	URL<TAB>VALUE
//
// The URL is normalized as the crawler normalizes links (recorder/urlnorm),
// so it matches the URLs the crawler queues and logs; a URL listed twice
// after normalization is an error. VALUE is a finite non-negative number
// (strconv.ParseFloat syntax); spaces around either field and a trailing
// CR are ignored. Pages the file does not list have quality 0. A bad line
// is an error wrapping tracefile.ErrBadInput that names the file and the
// line, as is a file that cannot be opened. testweb's Web.WriteQuality writes this format
// (PageRank of its link graph, or Zipf-distributed values, summing to 1);
// crawltrace crawl --quality reads it.
//
// # The progress summary
//
// A crawl's fetches (robots.txt excluded), each a [Fetch] with the time it
// ended, measured from the crawl's start, and the oracle quality of its
// page, make a step curve: [ProgressCurve] puts them in the order they
// ended and sums pages and quality along them. [SummarizeProgress] reads
// that curve into a [Progress], the "progress" of a crawl's stats.json:
//
//   - At samples the curve at fractions 0.1, 0.2, 1/3, 0.4, ..., 0.9 and 1
//     of the crawl's duration: the pages that ended by then, as a count and
//     as a fraction of the pages this crawl fetched, and their quality, as
//     a sum and as a fraction of the oracle's total.
//   - TimeToPages gives the time at which 25%, 50%, 80% and 100% of the
//     crawl's pages had been fetched: the end of the ceil(f x n)th fetch.
//   - TimeToQuality gives the time at which the running quality first
//     reached 25%, 50%, 80% and 100% of the oracle's total (to a relative
//     1e-9, which absorbs rounding in the sum), or -1 if it never did.
//
// Pages are measured against the crawl's own count, which says how
// front-loaded the crawl was; quality against the oracle's total, which
// also shows what a crawl cut short by a page budget never fetched. When
// the oracle's total is 0, quality fractions are of the quality fetched.
// Without an oracle, quality is 0 and TimeToQuality is empty.
//
// The functions are pure and the types plain values: nothing here is safe
// for concurrent mutation, and nothing needs to be.
package quality
