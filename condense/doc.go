// Package condense turns raw URL logs into condensed traces of 64-bit
// fingerprints and verifies, exactly, that the fingerprints did not merge
// distinct URLs.
//
// # What it writes
//
// For every node of a crawl directory: node-NNN.full.arrow (the fingerprint
// of every URL, in log order) and node-NNN.cross.arrow (only the URLs whose
// dest is another node: the paper's "cross subtrace"), and report.json.
//
// # Exact collision check at bounded memory
//
// Broder, Najork and Wiener compared two counts (distinct URLs after sorting
// the raw logs, distinct fingerprints in a hash table on a very large
// machine). condense does more: it counts both exactly and lists every
// colliding pair by name, within a memory budget.
//
// The map side reads every segment once, on Config.Workers workers (one
// segment each at a time; a segment read ahead of its node's turn keeps its
// fingerprints in a chunk file until the segments before it are written, so
// the condensed traces stay in log order). Each worker hashes each URL and
// spills the first occurrences of (fingerprint, node, URL) to its bucket
// file, in blocks of one fingerprint range each (an unsharded run keeps
// the blocks that fit three eighths of its memory budget beyond 64 MiB in
// memory instead, so that they are neither written nor read back). Identical URLs are the
// bulk of a crawl trace (the paper's whole point), so a fingerprint-indexed
// table over a ring of copies of recent URLs drops a repeat after one
// comparison of the full string with a copy of a URL already spilled; it
// never drops a URL that differs from the one kept, so nothing is lost for
// the check. Where the filter drops fewer than half the rows (repeats of
// URLs it no longer holds: a trace of few or far-apart repeats), looking
// them up costs more than spilling them, so a gate spills such stretches
// of rows without the filter (report.json: unfiltered_rows). A URL always falls in the same range as
// its fingerprint, so the per-range counts of distinct URLs and distinct
// fingerprints add up to the global ones, and a collision is always inside
// one range. The reduce side loads each range and groups its records by
// fingerprint in a hash table of the range's fingerprints, comparing each
// record's URL with the first URL of its fingerprint; fingerprints with
// more than one distinct URL are the collisions (a crawl with nodes 64 and
// above sorts the range by fingerprint instead). A range larger than
// its share of the budget is split again by the next bits of the
// fingerprint.
//
// # Counting in memory
//
// An unsharded run first counts in memory instead of spilling: the map
// workers share one exact table of the distinct URLs (aggTable, five
// eighths of the budget beyond its first 64 MiB), each URL copied once
// with the set of nodes that logged it and a fingerprint found with a
// second string marked colliding; a small per-worker table of the URLs
// read last on the current node (recentURLs) drops most repeats after one
// comparison of the full string with the large table's copy, so that only
// the other rows take a lock and a lookup there. Where the recent table
// drops under a quarter of the rows (a uniform trace), it is left aside,
// and each row is looked up by the worker that owns its part of the table
// (worker p mod n of n owns part p): the others hand it their rows by
// reference and serve its rows while they wait for theirs (exchange.go),
// so that a part's lines stay in one core's cache. When every URL fits, the
// run counts the table part by part and spills nothing (report.json:
// in_memory). When the table is full, or the recent-URL table drops fewer
// than half the rows (a quarter, over its own shorter window) while the
// table is not on course to hold every URL of the run (for the recent
// table's verdict: with a quarter of its limit to spare; then a lookup in
// the large table costs more than a spill, and the spill is coming
// anyway; when it is on course, the table is sized for the URLs projected
// at once), the workers switch to the spill above: through a repeat
// filter after a full table, with none after few repeats, and keeping
// blocks in memory as far as the budget left beside the table goes. At
// the end the table is written to the buckets as ordinary records, one
// per URL and node, so nothing is lost. Crawls with
// nodes 16 and above, budgets below 64 MiB plus about 26 MiB a worker
// (115 MiB on 2), and sharded runs spill from the start.
//
// The cost of counting in memory is the latency of its lookups, which land
// at random in a few hundred megabytes: the table's slots, its copies (one
// arena, each copy on as few cache lines as its length allows) and the
// recent-URL tables are on huge pages where the kernel gives them
// (internal/hugemem), each part's lock is a cache line away from what
// lookups read (and is waited for by spinning: a part is held for one
// lookup), and the slots and copies of a block of rows are prefetched
// before they are looked up.
//
// The condensed traces are written past the page cache (O_DIRECT) where
// the file system takes it: they are written once, and caching them on
// the way out cost a copy into fresh pages. A replay run right after
// reads them from the disk, not from memory.
//
// # Shards
//
// With Config.Shard = i and Config.Shards = N, [Run] is map task i of a
// cluster run: it reads only the i-th of N equal byte ranges of the input
// (every node's segments end to end, split between record batches, so a
// one-node crawl splits as evenly as any), writes its parts of the traces
// in Output/parts/map-i, and leaves its buckets in Output/buckets/map-i and
// its part of the report in map-i-of-N.json. [Reduce] task j then verifies
// fingerprint range j from every map task's buckets
// (report-shard-j-of-N.json), [Merge] adds the reports into the report an
// unsharded run would have written, and [MergeTraces] joins each node's
// parts in task order, its log order. Each byte a run reads is read once
// in all (of a URL batch, a condense reads only the buffers it decodes: the
// url column, the string columns' offsets and dest).
// On a damaged input too the merge counts what an unsharded run counts: a
// map task whose range starts inside a segment reads its part of it (its
// head part, [HeadPart]) without knowing whether a batch before it is
// corrupt, and the merge and the reduce drop that part when an earlier
// task reported the segment cut.
// docs/cluster.md shows Slurm and Kubernetes recipes.
package condense
