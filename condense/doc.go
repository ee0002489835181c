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
// During the streaming pass each (fingerprint, node, URL) is spilled to one
// of P partition files chosen by the fingerprint's range. Identical URLs are
// the bulk of a crawl trace (the paper's whole point), so a small exact cache
// of recently spilled URL strings (direct-mapped on the fingerprint,
// comparing the full string) drops repeats before they reach disk; it never
// drops a URL that differs from the one cached, so nothing is lost for the
// check. A URL always falls in the same range as its fingerprint, so the
// per-partition counts of distinct URLs and distinct fingerprints add up to
// the global ones, and a collision is always inside one partition. Each
// partition is then loaded, sorted by fingerprint and scanned, groups with
// one fingerprint and more than one distinct URL being the collisions. A
// partition larger than its share of the budget is split again by the next
// bits of the fingerprint.
//
// # Shards
//
// With Config.Shard = i and Config.Shards = N, only fingerprint range i of N
// is verified and only nodes n with n mod N = i get their condensed traces
// written; the result is a partial report (report-shard-i-of-N.json), and
// [Merge] adds the partial reports into the report an unsharded run would
// have written. docs/cluster.md shows Slurm and Kubernetes recipes.
package condense
