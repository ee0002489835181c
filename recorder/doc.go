// Package recorder is crawltrace's crawler: a polite, multi-node web crawler
// built like Mercator whose host splitter logs every URL it receives, which
// is the raw trace the rest of crawltrace condenses and replays.
//
// This package is the assembly: [Run] builds each node's stages from one
// [Config], wires them together, decides when the crawl stops, and reports
// [Stats]. The stages are packages of their own, each with its own doc and
// tests (docs/architecture.md draws the pipeline and says what each owns):
//
//	frontier -> worker -> fetch -> extract -> urlfilter -> splitter (logged) -> due -> frontier
//	                                                          |  \
//	                                                          |   `-> peer -> another node's splitter
//	                                                          `-> raw URL log (internal/tracefile)
//
// The stages:
//
//   - recorder/frontier: the two-level schedule (servers, then URLs per
//     server, by [Config.Order]), politeness, robots.txt parking and hops,
//     connection sessions, the disk spill of long queues;
//   - recorder/robots and recorder/politeness: robots.txt rules and their
//     retry policy; politeness keys and the delay rule (docs/politeness.md);
//   - recorder/fetch: the HTTP client, bodies, the SSRF dialer, redirects;
//   - recorder/worker: the fetch-extract-submit loop and its counters;
//   - recorder/splitter: the host splitter, where the trace is taken:
//     every URL is assigned a node by the partitioner (recorder/partition)
//     and logged before any cache or duplicate check; fail-over routing;
//   - recorder/due: the duplicate URL eliminator, in memory or on disk;
//   - recorder/peer: batches between nodes, in process or over TCP
//     (outbox, acknowledgements, handshake, epochs, failure detector,
//     termination; docs/peers.md);
//   - recorder/checkpoint: the checkpoint format and its atomic commit
//     (docs/crash-safety.md).
//
// Config.Nodes > 1 runs that many nodes in one process over an in-memory
// transport; the crawl ends exactly when no URL is queued, fetched, waiting
// in a splitter or in transit anywhere. With Config.Peers each process runs
// one node and batches travel over HTTP between processes.
//
// With Config.Local ([LocalWeb]: a web answered in process) the crawl is
// deterministic: one goroutine drives every node's stages on a virtual
// clock (virtual.go), so the same configuration gives the same rows in
// the same order on any machine; docs/architecture.md says what stays
// nondeterministic, and what a live crawl's concurrency changes.
//
// # Output
//
//		OutDir/node-NNN/urls-*.arrows   raw URL log (internal/tracefile)
//		OutDir/node-NNN/pages-*.arrows  page log: every fetch attempt, robots.txt included
//		OutDir/manifest.json            written when the crawl stops
//		OutDir/stats.json               [Stats]
//		OutDir/node-NNN/events.jsonl    membership events (TCP mode)
//		OutDir/node-NNN/state/          the node's durable state (see state.go):
//	    config.json                 the crawl's configuration and crawl id
//	    topology.json               the crawl's topology, fixed for its life
//	    checkpoint/                 the last complete checkpoint (recorder/checkpoint)
//	    discarded/run-T/            log rows cut by a resume at time T
//	    epoch, outbox/              incarnation and spilled batches for peers (TCP mode)
//
// Page ids are node<<40 | n (n from 1), so they are unique over the crawl;
// seeds have source 0. In TCP mode every process merges its node into
// OutDir/manifest.json under a file lock and writes its stats to
// OutDir/node-NNN/stats.json.
//
// # Stopping and resuming
//
// MaxPages, Duration or ctx cancellation stop the workers, flush and close
// every segment, take a final checkpoint, and write the manifest and the
// stats. A crawl killed outright leaves every flushed batch readable.
// Every [Config.CheckpointEvery] each node's state is saved at a
// consistent cut; a crawl started with [Config.Resume] in the same OutDir,
// after a clean stop or kill -9, loads the newest checkpoint every node
// has, cuts the logs back to it (rows after it are kept under
// state/discarded/ and counted in [Stats]), and goes on as the same crawl.
// No URL logged before the checkpoint is lost; pages fetched after it may
// be fetched again. Without Resume, an OutDir that already holds a crawl is
// refused.
package recorder
