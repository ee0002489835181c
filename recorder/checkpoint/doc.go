// Package checkpoint writes, commits, finds, proves and loads the
// checkpoints of a crawl's nodes: a node's whole crawl state at a
// consistent cut, enough to continue the crawl after kill -9 (the
// recorder's Config.Resume). The package knows the format and the
// atomic commit; what a checkpoint holds is given by its caller as
// [Part]s, each a named piece of state that saves itself to one file and
// loads itself back.
//
// # Directory layout
//
// A node's durable state lives beside its segments, in
// OutDir/node-NNN/state/ ([StateDir]). Its checkpoints are directories in
// it:
//
//	state/checkpoint/        the node's last complete checkpoint
//	state/checkpoint.tmp/    the next one, while it is written
//	state/checkpoint.old/    the previous one, while the nodes of a process
//	                         switch to the next
//
// A checkpoint directory holds one file per part, named by [Part.Name],
// and checkpoint.json, which describes them.
//
// # checkpoint.json
//
// checkpoint.json ([Meta]) is JSON, indented by two spaces, one field a
// line, with its fields in this order and a newline at its end (each part
// is shown here on one line):
//
//	{
//	  "format": "crawltrace-checkpoint",   the format's name, Format
//	  "version": 2,                        the format's version, Version
//	  "crawl_id": "20261125T024430Z",      the crawl's id
//	  "node": 0,                           the node that wrote it
//	  "generation": 49,                    counts the crawl's checkpoints from 1
//	  "time": "2026-11-25T02:44:47Z",      when it was taken (UTC, RFC 3339)
//	  "stop": "done",                      clean stop only: why the crawl stopped
//	  "fetch_attempts": 2834,              clean stop only: the node's fetches
//	  "crawl_done": true,                  see below; left out when false
//	  "parts": [                           in the order the parts were saved
//	    {"name": "segments", "bytes": 318, "xxhash64": "0e691e2b4663ee41"},
//	    ...
//	  ],
//	  "checksum": "0c144301ef9e9061"       of this file, see below
//	}
//
// Every part is recorded with its size in bytes and the xxhash64
// (github.com/cespare/xxhash/v2) of its bytes, in 16 lowercase hex
// digits. "checksum" is the xxhash64 of checkpoint.json itself, taken over
// the file's bytes with the checksum's own 16 digits written as zeros; it
// is the last field, so a reader finds its digits from the end of the
// file. "stop" and "fetch_attempts" are set by the checkpoint of a clean
// stop: the reason the crawl stopped and the fetches the node had made
// (resuming a finished crawl does nothing). "crawl_done"
// is set by the final checkpoint of a node of a TCP crawl that stopped
// because the whole crawl was over: every node idle and drained, none
// declared dead, nothing left in its outbox. Version 1 (written before
// checksums) is refused by name.
//
// # Parts
//
// The package does not read parts: each is bytes its [Part] writes and
// reads back. The recorder saves these, in this order:
//
//	segments      gob: per log (URLs, pages) the closed segments (file,
//	              rows, batches, bytes, clean, and the xxhash64 of the
//	              file's bytes its writer computed), the open segment's
//	              file, byte length (a batch boundary), rows, batches and
//	              the xxhash64 of those bytes, and the next URL row
//	              sequence number (tracefile.SegmentInfo; checkpoints
//	              written before the hashes have none)
//	due           the DUE's fingerprints (recorder/due's checkpoint format)
//	frontier      gob: a count, then per server its key, next allowed
//	              request time, robots.txt state and queued URLs with their
//	              quality, in groups; URLs workers held at the cut come first
//	counters      gob: the node's and its splitter's counters by their
//	              stats.json names (worker.Counters, splitter.Stats; older
//	              checkpoints named three of the workers' differently and
//	              kept the splitter's in a struct: both still load), counts
//	              by status and filter reason, page id, and the counts of
//	              earlier resumes
//	pending       gob: a count, then the batches sent to this node in this
//	              process and not yet processed at the cut (in-process
//	              crawls of several nodes)
//	warc          crawl --warc, gob: every file of the node's WARC series
//	              with its size at the cut (the last one open), and the
//	              WARC writer's counters (recorder/warcout)
//	batches.json  TCP mode, JSON: per sending incarnation (from, epoch) the
//	              highest seq through which every batch was processed and
//	              the seqs processed above it (the durable marks senders
//	              drop their outbox batches by)
//
// # Writing and committing
//
// [Write] removes state/checkpoint.tmp/, creates it, and writes each part
// to a file of its name there through a buffer, syncing and closing it;
// the size and xxhash64 of the part are taken as it is written, not by
// reading it back. Then checkpoint.json is written and synced, then the
// directory. [Commit] then makes the checkpoint current: it removes
// checkpoint.old/, renames checkpoint/ to checkpoint.old/ (if there is
// one) and checkpoint.tmp/ to checkpoint/, and syncs state/. A process
// running several nodes writes every node's checkpoint.tmp/ before it
// commits any, commits them node by node, and only then removes every
// checkpoint.old/ ([RemoveOld]).
//
// # What a crash leaves
//
// Killed at any point, every node is left with a complete checkpoint: in
// checkpoint/, or in checkpoint.old/ if the kill fell between Commit's two
// renames. The nodes of a process are at most one generation apart, and
// a node that switched to the newer one keeps the older in
// checkpoint.old/ until RemoveOld, so the newest generation every node
// has is on disk for all of them. A checkpoint.tmp/ may be left half
// written; the next [Write] removes it. The one exception is a process
// killed while it committed its first checkpoint: nodes not yet switched
// have none in checkpoint/ and hold it, complete, in checkpoint.tmp/.
// [Find] treats that as no checkpoint at all, and the crawl starts again
// from its seeds.
//
// # Loading proves a checkpoint
//
// [Find] chooses and proves a checkpoint for every node before any part
// is loaded (loading the segments part moves rows aside). For each node it
// reads checkpoint.json in checkpoint/ and checkpoint.old/ and checks its
// checksum, format, version, node and crawl id; it picks the newest
// generation every node has; then, for that generation, it checks each
// part's size and xxhash64 against checkpoint.json, reading every part
// once. A checkpoint that does not prove itself is an error naming the
// file that failed, matching tracefile.ErrCorrupt. A checkpoint/ whose
// checkpoint.json is missing or damaged is such an error too: checkpoint/
// is only ever renamed into place whole, so this is damage, not a crash.
// The resume does not fall back to an older checkpoint, nor start the
// crawl again (docs/crash-safety.md says why). The recorder then checks
// the segments each segments part lists against their recorded sizes and
// xxhash64s (tracefile.CheckLog), still before anything is written.
// [Load] then loads the parts
// in the caller's order; a part the checkpoint does not list (one an
// older checkpoint lacks) is left as it is.
//
// # The cut
//
// The recorder takes a checkpoint at a cut, which a [Coordinator] drives
// through the [Node]s of a process: it parks every splitter of the
// process between two messages (workers go on fetching meanwhile;
// their pages wait in the splitter channels), takes the list of batches
// in transit between them, then lets each splitter save its parts on its
// own goroutine and go on. At that point the logs hold exactly what the
// splitters processed; the DUE, the frontier and the pending batches hold
// the URLs admitted from them; URLs workers had taken but whose pages
// were not yet logged are saved as queued, so they are fetched again after
// a crash. The log writers flush and sync their open segment at the cut;
// a resume cuts the open segment back to that length (the original file
// is kept under state/discarded/) and moves segments opened later there
// too.
package checkpoint
