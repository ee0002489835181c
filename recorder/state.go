package recorder

import (
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
)

// A node's durable state lives beside its segments, so that a crawl
// directory alone is enough to resume it:
//
//	OutDir/node-NNN/state/epoch         the node's incarnation, bumped at every start
//	OutDir/node-NNN/state/checkpoint/   the last complete checkpoint (frontier, DUE,
//	                                    host politeness and robots state, counters,
//	                                    segment positions, batches processed per peer,
//	                                    batches for peers not yet durable at them)
//	OutDir/node-NNN/state/outbox/       batch bodies the outbox spilled beyond its
//	                                    memory (TCP mode; working files)
//
// Every file is written atomically (tracefile.WriteFileAtomic or write,
// fsync, rename); a checkpoint is complete only once it is renamed into
// place, and the previous one is kept until then. A checkpoint records
// the xxhash64 of every file it holds and of its description, and is
// proved before it is loaded (recorder/checkpoint). OutDir/node-NNN/.crawltrace-lock
// is the node's write lock, held by the one process running it (lockCrawl).
// docs/crash-safety.md says what holds after a crash.
const StateDirName = checkpoint.StateDirName

const (
	discardedDirName = "discarded"   // log rows a resume cut, in the state directory
	configFileName   = "config.json" // the crawl's saved configuration, in the state directory
)

// stateDir is node's state directory under outDir.
func stateDir(outDir string, node int) string {
	return checkpoint.StateDir(outDir, node)
}
