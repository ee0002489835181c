package scenario

import "github.com/crawltrace/crawltrace/internal/tracefile"

// Reading is how a question reads a crawl's URL logs. They are read with
// the checks condense makes (tracefile.NodeURLReader: the end-of-stream
// marker of every segment, its rows against manifest.json): a cut segment
// is read as far as it is complete and given to Cut or, with Strict, is
// an error wrapping tracefile.ErrCorrupt, as with condense --strict. The
// zero value reads cut segments without a word.
type Reading struct {
	// Strict makes a cut segment an error.
	Strict bool
	// Cut, when not nil, is called for every cut segment at the end of
	// each pass that reads it (a question may read a node's log more than
	// once: callers that print warnings drop repeats by File).
	Cut func(tracefile.CutSegment)
}

// open opens node's URL log in dir.
func (rd Reading) open(dir string, node int) (*tracefile.NodeURLReader, error) {
	r, err := tracefile.OpenNodeURLs(dir, node)
	if err != nil {
		return nil, err
	}
	r.Strict = rd.Strict
	return r, nil
}

// done reports the cut segments of r, a reader that has reached its end.
func (rd Reading) done(r *tracefile.NodeURLReader) {
	if rd.Cut == nil || r.Err() != nil {
		return
	}
	for _, c := range r.Cut() {
		rd.Cut(c)
	}
}
