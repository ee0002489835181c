package recorder

import (
	"io"
	"path/filepath"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// A node's durable state lives beside its segments, so that a crawl
// directory alone is enough to resume it:
//
//	OutDir/node-NNN/state/epoch         the node's incarnation, bumped at every start
//	OutDir/node-NNN/state/checkpoint/   the last complete checkpoint (frontier, DUE,
//	                                    host politeness and robots state, counters,
//	                                    segment positions, batches processed per peer)
//	OutDir/node-NNN/state/outbox/       batches for peers not yet covered by the
//	                                    receiver's durable state (TCP mode)
//
// Every file is written atomically (tracefile.WriteFileAtomic or write,
// fsync, rename); a checkpoint is complete only once it is renamed into
// place, and the previous one is kept until then. A checkpoint records
// the xxhash64 of every file it holds and of its description, and is
// proved before it is loaded (checkpoint.go). OutDir/node-NNN/.crawltrace-lock
// is the node's write lock, held by the one process running it (lockCrawl).
// docs/crash-safety.md says what holds after a crash.
const StateDirName = "state"

// stateDir is node's state directory under outDir.
func stateDir(outDir string, node int) string {
	return filepath.Join(tracefile.NodeDir(outDir, node), StateDirName)
}

// checkpointPart is one piece of a node's state saved in a checkpoint, one
// file per part named by checkpointName. Parts are saved and loaded at a
// consistent point: on the splitter's goroutine, with workers holding no
// page whose URLs the splitter has not seen.
type checkpointPart interface {
	checkpointName() string
	saveCheckpoint(w io.Writer) error
	loadCheckpoint(r io.Reader) error
}
