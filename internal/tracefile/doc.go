// Package tracefile owns crawltrace's on-disk trace format: the Arrow
// schemas, the schema metadata, the crawl-directory layout and manifest, and
// the readers and writers that recorder, condense, replay and the importers
// all go through. docs/trace-format.md mirrors this comment.
//
// # Crawl directory (raw trace)
//
//	DIR/manifest.json            nodes, segments, row counts, sizes, xxhash64s, clean/cut flags; sealed JSON
//	DIR/stats.json               crawl statistics (written by the recorder)
//	DIR/node-000/urls-000001.arrows   raw URL log segments, in order
//	DIR/node-000/pages-000001.arrows  page log segments, in order
//	DIR/node-000/events.jsonl    node events of a crawl over --peers ([EventLog], [ReadEvents])
//
// # Raw URL log
//
// One log per crawler node, holding every URL that entered the node's host
// splitter, in the order received. It is written as Arrow IPC stream
// segments (".arrows"), rotated by size. A record batch is flushed every
// [WriterConfig.FlushRows] rows or [WriterConfig.FlushInterval], whichever
// comes first, so a crash loses at most the unflushed tail. Columns:
//
//	seq     uint64        position in this node's stream (0-based, dense)
//	time    timestamp[ns] when the URL entered the splitter (UTC)
//	url     utf8          absolute, normalized URL: exactly the fingerprinted bytes
//	kind    utf8          "seed", "link" or "redirect"
//	tag     utf8 (null)   HTML tag it came from: a, img, link, script, ...; null for seeds and redirects
//	source  uint64        id of the page it was extracted from; 0 for seeds
//	worker  uint16        the fetch worker that extracted it
//	dest    uint16        the node the splitter assigned it to
//
// kind and tag are plain strings, not dictionaries: a dictionary that grows
// between batches cannot be written to the IPC file format, and the strings
// are short.
//
// # Page log
//
// One row per fetch attempt, as Arrow IPC stream segments beside the URL
// log: id, time, url, status, content_type, bytes, truncated, duration_ns,
// links, unique_links, redirect, error (see [PageSchema]).
//
// # Schema metadata
//
// Every file's schema carries: crawltrace.format ("crawltrace"),
// crawltrace.version, crawltrace.kind ("urls", "pages" or "condensed"),
// crawltrace.crawl_id, crawltrace.node, crawltrace.nodes,
// crawltrace.partitioner, crawltrace.created (RFC 3339) and
// crawltrace.tool_version; condensed traces add crawltrace.subtrace ("full"
// or "cross") and crawltrace.checksum. Results tables carry the
// checksum too (see [TableMeta]).
//
// # Checksums and damaged files
//
// crawltrace.checksum is "xxh64:" and the xxHash64 (16 hex digits) of
// every byte of the condensed trace or results table, with that value
// itself read as the placeholder "xxh64:????????????????": data, record
// batch metadata, both schemas and their metadata, footer. The writers
// hash the file as they write it and patch the value into the footer's
// schema; the leading schema message keeps the placeholder. A full pass
// of a [CondensedReader], [VerifyChecksum] (inspect --verify, export,
// inspect of a table) check it; a file without one is refused, one whose
// checksum covers only its data (written before) reads as [ChecksumData].
// Schema metadata is also checked key by key: an unknown, missing or
// repeated key, node >= nodes, no nodes, an unknown partitioner, kind or
// subtrace are ErrCorrupt. Before arrow-go reads an Arrow file, its
// footer, schema, blocks and messages are bounds-checked (checkFile), so
// a damaged file is an error naming it, never a panic.
//
// The JSON files a crawl is resumed or read from (manifest.json,
// state/config.json, state/topology.json) are sealed JSON
// ([MarshalSealed]): their last key is a checksum of the whole file, and
// [UnmarshalSealed] refuses unknown and missing keys. Raw segments carry
// no checksum (a log cut at any time); their size and xxhash64 are
// recorded in manifest.json and the checkpoints ([VerifySegment]).
//
// # Stream segments and crashes
//
// A segment ends cleanly with the IPC end-of-stream marker (0xFFFFFFFF
// followed by a zero length). A segment without it was cut (the writer was
// killed): readers return every complete batch and report the cut in
// [SegmentInfo]. The Arrow stream reader reports no error when a file is cut
// exactly on a batch boundary, which is why the marker is checked.
//
// A crawl resumed from a checkpoint cuts each log back to the position its
// writer had at the checkpoint with [RestoreLog]: later rows move, in
// whole files, to a discard directory, and the open segment is cut on the
// checkpointed batch boundary and given the marker ([CutSegmentAt]).
//
// # Condensed trace
//
// An Arrow IPC file (not stream), uncompressed, one non-null column fp uint64,
// so it can be mapped and read zero-copy with ipc.NewMappedFileReader. Per
// node there is a "full" trace (every URL, in order) and a "cross" trace (only
// the URLs whose dest is another node): node-000.full.arrow,
// node-000.cross.arrow.
//
// # Parquet export
//
// [ExportParquet] writes crawls (per node, the URL and page logs with a
// leading node column), condensed traces and results tables as Parquet
// through arrow-go's pqarrow: zstd, row groups of at most
// [ParquetConfig.RowGroupRows] rows, one row group in memory at a time, and
// the schema metadata above as the file's key-value metadata. A
// directory's export writes its files under temporary names, renames them
// all into place once every one is complete, then writes an empty
// _SUCCESS ([ParquetSuccess]): a failed export leaves no .parquet file.
//
// # Errors
//
// Every error caused by a bad input file wraps [ErrCorrupt] (the file is not
// what it claims to be) or [ErrBadInput] (a wrong kind of file, an empty
// directory, an empty crawl), and names the file.
package tracefile
