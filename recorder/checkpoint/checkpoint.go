package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

const (
	// Format names the checkpoint format in checkpoint.json.
	Format = "crawltrace-checkpoint"
	// Version is the checkpoint format's version (2: parts and
	// checkpoint.json checksummed).
	Version = 2

	// StateDirName is the name of a node's state directory, in its node
	// directory ([StateDir]).
	StateDirName = "state"
	// DirName is the node's current checkpoint, in its state directory.
	DirName = "checkpoint"
	// TmpName is the checkpoint being written, in the state directory.
	TmpName = "checkpoint.tmp"
	// OldName is the previous checkpoint, kept while the nodes of a
	// process switch to the next one.
	OldName = "checkpoint.old"
	// MetaName is the file describing a checkpoint, in its directory.
	MetaName = "checkpoint.json"
)

// StateDir is node's state directory under the crawl directory outDir:
// OutDir/node-NNN/state. A node's checkpoints are directories in it.
func StateDir(outDir string, node int) string {
	return filepath.Join(tracefile.NodeDir(outDir, node), StateDirName)
}

// A Part is one piece of a node's state saved in a checkpoint, one file
// per part named by Name. Parts are saved and loaded at a consistent
// point chosen by the caller (the recorder: on the splitter's goroutine,
// with workers holding no page whose URLs the splitter has not seen), so
// a Part need not be safe for concurrent use with the rest of the node.
type Part interface {
	// Name is the part's file name in the checkpoint directory: a plain
	// file name, the same in every checkpoint, not checkpoint.json.
	Name() string
	// Save writes the part's state to w. The writer is buffered; Save
	// need not flush it.
	Save(w io.Writer) error
	// Load replaces the part's state with the one Save wrote to r. The
	// bytes were proved against checkpoint.json first, but Load must
	// still return an error, not panic, on bytes it cannot read.
	Load(r io.Reader) error
}

// Meta is checkpoint.json: it names the checkpoint's crawl, node and
// generation, and lists its parts with their sizes and xxhash64s. Its
// fields are written in this order (the checksum depends on it).
type Meta struct {
	// Format is [Format]; set by [Write].
	Format string `json:"format"`
	// Version is [Version]; set by [Write].
	Version int `json:"version"`
	// CrawlID is the id of the crawl the checkpoint belongs to.
	CrawlID string `json:"crawl_id"`
	// Node is the id of the node that wrote it.
	Node int `json:"node"`
	// Generation counts the crawl's checkpoints from 1; the nodes of a
	// process take each generation at one cut.
	Generation uint64 `json:"generation"`
	// Time is when the checkpoint was taken.
	Time time.Time `json:"time"`
	// Stop is set by the checkpoint of a clean stop: why the crawl
	// stopped.
	Stop string `json:"stop,omitempty"`
	// Attempts is set by the checkpoint of a clean stop: the fetches the
	// node had made.
	Attempts int64 `json:"fetch_attempts,omitempty"`
	// CrawlDone: set by the final checkpoint of a TCP node that stopped
	// on a complete termination decision with nothing left for its peers.
	CrawlDone bool `json:"crawl_done,omitempty"`
	// Parts are the parts saved, in the order they were saved; set by
	// [Write].
	Parts []Ref `json:"parts"`
	// Checksum is the xxhash64 of checkpoint.json with these 16 digits
	// written as zeros; set when the file is written. It must stay last.
	Checksum string `json:"checksum"`
}

// A Ref is one part as checkpoint.json records it.
type Ref struct {
	// Name is the part's file name ([Part.Name]).
	Name string `json:"name"`
	// Bytes is the part's size.
	Bytes int64 `json:"bytes"`
	// XXH64 is the xxhash64 of the part's bytes, 16 lowercase hex digits.
	XXH64 string `json:"xxhash64"`
}

// maxMetaBytes bounds the checkpoint.json a resume reads.
const maxMetaBytes = 1 << 20

// zeroSum is a checksum's place holder while checkpoint.json is hashed.
const zeroSum = "0000000000000000"

func hexSum(v uint64) string { return fmt.Sprintf("%016x", v) }

// encodeMeta renders m as checkpoint.json, with its checksum.
func encodeMeta(m Meta) []byte {
	m.Checksum = zeroSum
	b, _ := json.MarshalIndent(m, "", "  ")
	b = append(b, '\n')
	field := []byte(`"checksum": "` + zeroSum + `"`)
	i := bytes.LastIndex(b, field)
	copy(b[i+len(field)-1-len(zeroSum):], hexSum(xxhash.Sum64(b)))
	return b
}
