package recorder

import (
	"io"

	"github.com/crawltrace/crawltrace/recorder/checkpoint"
)

// checkpointPart is one piece of a node's state saved in a checkpoint, one
// file per part named by checkpointName. Parts are saved and loaded at a
// consistent point: on the splitter's goroutine, with workers holding no
// page whose URLs the splitter has not seen. It is [checkpoint.Part] with
// the recorder's own method names; nodePart makes one of the other.
type checkpointPart interface {
	checkpointName() string
	saveCheckpoint(w io.Writer) error
	loadCheckpoint(r io.Reader) error
}

// nodePart is a node's checkpointPart as a [checkpoint.Part].
type nodePart struct{ p checkpointPart }

var _ checkpoint.Part = nodePart{}

func (x nodePart) Name() string           { return x.p.checkpointName() }
func (x nodePart) Save(w io.Writer) error { return x.p.saveCheckpoint(w) }
func (x nodePart) Load(r io.Reader) error { return x.p.loadCheckpoint(r) }

// checkpointParts is n's parts, in registration order, as
// [checkpoint.Write] and [checkpoint.Load] take them.
func (n *node) checkpointParts() []checkpoint.Part {
	ps := make([]checkpoint.Part, len(n.parts))
	for i, p := range n.parts {
		ps[i] = nodePart{p}
	}
	return ps
}
