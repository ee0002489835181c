// Package scenario answers distributed-crawl what-if questions from one
// recorded crawl, without recrawling: how the URL stream would split over
// other partitioners and crawl sizes, what a cache in front of the host
// splitter saves, per-thread against global caches, what losing or adding a
// node costs, and whether LRU hits come from pages of one host.
//
// # The URL stream of a crawl
//
// A raw crawl directory holds, per node, every URL that entered the node's
// host splitter: the links of the pages the node fetched, their redirects,
// and the seeds it owns. A URL sent to a peer is logged once, by the node
// that extracted it. The union of the nodes' logs is therefore the crawl's
// whole URL stream, each URL occurrence exactly once. [Each] reads it
// interleaved by the time column (ties broken by node number), the order
// in which the crawl as a whole produced it; [OrderNode] reads node after
// node instead, for traces without meaningful times (an imported URL list
// has all times 0, which the time order turns into node order anyway).
// Questions about one node's splitter (splitter cache, threads, locality)
// read each node's log on its own with [EachNode].
//
// # Who extracts a URL under another partitioning
//
// Re-partitioning moves pages as well as links: a page is fetched by the
// owner of its URL, so the node that extracts a link is the owner, under the
// new partitioner, of the link's source page. The source column holds the
// page id; the page log maps ids to page URLs. For each row:
//
//   - seeds (kind "seed") are logged by their owner, as the recorder does,
//     so they never cross;
//   - when the page log holds the source page, the extractor is the new
//     owner of the page's URL;
//   - otherwise (an imported URL list, a page log lost in a crash) the
//     extractor is the logging node folded into the new range (node mod N).
//     For the recorded partitioner and N this is exactly the recording.
//
// [PartitionResult] counts the rows determined each way.
//
// # Questions
//
//   - [Partition]: per N and partitioner, per-node load in URLs and hosts,
//     balance (max/mean), cross fraction and bytes, optionally the derived
//     condensed full and cross subtraces (partition.go).
//   - [SplitterCache]: per node, a cache (policy, size) in front of the
//     peer sends and batches of B URLs: URLs, bytes and batches sent and
//     saved (splittercache.go).
//   - [Threads]: W per-thread LRU caches of k/W entries against one
//     shared cache of k, from exact stack distances (threads.go).
//   - [NodeLoss]: remove or add a node at a point of the stream; hosts
//     reassigned, URLs fetched twice, balance after, consistent hashing
//     against hash mod N (nodeloss.go).
//   - [Locality]: which LRU hits re-reference a URL last seen on a page of
//     the same host, and the reuse-distance distribution split that way
//     (locality.go).
//   - [All] runs every question with its defaults and writes
//     scenario-summary.json (all.go).
//
// Each question writes a table as CSV and as an Arrow IPC file, and a plot
// as PNG and SVG, into its output directory.
//
// # Memory
//
// Every question is one streaming pass (Partition with WriteTraces adds one
// pass per (partitioner, N), NodeLoss with a fractional change point one
// counting pass). Sets are of 64-bit fingerprints: memory grows with the
// distinct hosts (Partition), distinct URLs (NodeLoss, Threads, Locality)
// and pages (the page index holds page URLs) of the crawl, not with its
// length.
package scenario
