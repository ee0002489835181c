package tracefile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// URLBatch gives typed access to one record batch of a raw URL log. It
// borrows the batch: valid until the reader that produced it moves on.
type URLBatch struct {
	Rec    arrow.RecordBatch
	Seq    *array.Uint64
	Time   *array.Timestamp
	URL    *array.String
	Kind   *array.String
	Tag    *array.String
	Source *array.Uint64
	Worker *array.Uint16
	Dest   *array.Uint16
}

// NewURLBatch wraps a record batch read from a raw URL log segment.
func NewURLBatch(rec arrow.RecordBatch) URLBatch {
	return URLBatch{
		Rec:    rec,
		Seq:    rec.Column(0).(*array.Uint64),
		Time:   rec.Column(1).(*array.Timestamp),
		URL:    rec.Column(2).(*array.String),
		Kind:   rec.Column(3).(*array.String),
		Tag:    rec.Column(4).(*array.String),
		Source: rec.Column(5).(*array.Uint64),
		Worker: rec.Column(6).(*array.Uint16),
		Dest:   rec.Column(7).(*array.Uint16),
	}
}

// Len is the number of rows.
func (b URLBatch) Len() int { return int(b.Rec.NumRows()) }

// Row copies row i into a URLRecord. The strings are copies: arrow-go's
// String.Value aliases the batch's buffers, which the reader reuses.
func (b URLBatch) Row(i int) URLRecord {
	r := URLRecord{
		Seq: b.Seq.Value(i), Time: int64(b.Time.Value(i)), URL: strings.Clone(b.URL.Value(i)), Kind: strings.Clone(b.Kind.Value(i)),
		Source: b.Source.Value(i), Worker: b.Worker.Value(i), Dest: b.Dest.Value(i),
	}
	if b.Tag.IsValid(i) {
		r.Tag = strings.Clone(b.Tag.Value(i))
	}
	return r
}

// NodeURLReader reads a node's raw URL log across all its segments, in
// order. Cut segments yield their complete batches; [NodeURLReader.Segments]
// reports each segment's end state. It is not safe for concurrent use.
type NodeURLReader struct {
	// Strict makes a cut segment an error ([CutSegment.Err]) when the
	// reader reaches its end, as condense --strict does; otherwise its
	// complete batches are read and [NodeURLReader.Cut] lists it.
	Strict bool

	dir     string // the node directory
	node    int
	checked int // infos checked by checkStrict
	paths   []string
	i       int
	seg     *SegmentReader
	meta    Meta
	infos   []SegmentInfo
	err     error
	batch   URLBatch
	// want is the row count manifest.json records per segment file (nil
	// without a usable manifest).
	want map[string]int64
}

// OpenNodeURLs opens node's URL log in crawlDir.
func OpenNodeURLs(crawlDir string, node int) (*NodeURLReader, error) {
	dir := NodeDir(crawlDir, node)
	paths, err := ListSegments(dir, PrefixURLs)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: %s: no %s-*%s segments", ErrBadInput, dir, PrefixURLs, SegmentExt)
	}
	want, err := ManifestSegmentRows(crawlDir, node)
	if err != nil {
		return nil, err
	}
	r := &NodeURLReader{dir: dir, node: node, paths: paths, want: want}
	if err := r.open(); err != nil {
		return nil, err
	}
	if r.seg == nil {
		return nil, fmt.Errorf("%w: %s: every segment was cut before its schema", ErrBadInput, dir)
	}
	r.meta = r.seg.Meta()
	return r, nil
}

func (r *NodeURLReader) open() error {
	for ; r.i < len(r.paths); r.i++ {
		s, err := OpenSegment(r.paths[r.i], KindURLs)
		if IsCutSchema(err) {
			// A crash right after rotation: a cut segment with no rows.
			r.addInfo(SegmentInfo{File: filepath.Base(r.paths[r.i]), Error: err.Error()})
			continue
		}
		if err != nil {
			return err
		}
		r.seg = s
		return nil
	}
	return nil
}

// addInfo records a finished segment, checked against the row count the
// manifest records for it (see [CheckSegmentRows]).
func (r *NodeURLReader) addInfo(si SegmentInfo) {
	r.infos = append(r.infos, CheckSegmentRows(si, r.want))
}

// checkStrict makes the first cut segment not yet checked the reader's
// error when it is strict.
func (r *NodeURLReader) checkStrict() {
	for ; r.checked < len(r.infos); r.checked++ {
		if si := r.infos[r.checked]; !si.Clean && r.Strict && r.err == nil {
			r.err = CutOf(r.dir, r.node, si).Err()
		}
	}
}

// Cut lists the cut segments read so far (all, once Next is false).
func (r *NodeURLReader) Cut() []CutSegment {
	var out []CutSegment
	for _, si := range r.infos {
		if !si.Clean {
			out = append(out, CutOf(r.dir, r.node, si))
		}
	}
	return out
}

// CutSegment is a URL segment that did not end cleanly: its writer was
// killed (no end-of-stream marker, cut inside a batch or its schema, 0
// bytes), or it holds fewer rows than the manifest records (a truncated
// copy). Its complete batches are read.
type CutSegment struct {
	Node          int    `json:"node"`
	File          string `json:"file"` // path: the node directory joined with the segment's name
	RowsRecovered int64  `json:"rows_recovered"`
	Reason        string `json:"reason"`
}

// CutOf describes the cut segment si of node, whose directory is nodeDir.
func CutOf(nodeDir string, node int, si SegmentInfo) CutSegment {
	return CutSegment{Node: node, File: filepath.Join(nodeDir, si.File), RowsRecovered: si.Rows, Reason: si.Error}
}

// Err is the error a strict reader returns for c (wrapping [ErrCorrupt]).
func (c CutSegment) Err() error {
	return fmt.Errorf("%w: %s: cut segment (%d rows recovered): %s", ErrCorrupt, c.File, c.RowsRecovered, c.Reason)
}

// Warning is the one-line warning readers print for c.
func (c CutSegment) Warning() string {
	return fmt.Sprintf("warning: cut segment %s: recovered %d rows (%s)", c.File, c.RowsRecovered, c.Reason)
}

// CheckSegmentRows checks a finished URL segment against want, the rows
// the crawl's manifest records per segment file ([ManifestSegmentRows]):
// a segment holding fewer rows than its writer wrote was cut after the
// fact (a truncated copy), even when it ends on a batch boundary, and is
// returned as cut with the missing row count in its Error.
func CheckSegmentRows(si SegmentInfo, want map[string]int64) SegmentInfo {
	if w, ok := want[si.File]; ok && si.Rows < w {
		miss := fmt.Sprintf("%d rows missing: holds %d, %s records %d", w-si.Rows, si.Rows, ManifestName, w)
		if si.Error != "" {
			miss += "; " + si.Error
		}
		si.Clean, si.Error = false, miss
	}
	return si
}

// ManifestSegmentRows maps node's URL segment files to the rows crawlDir's
// manifest records for them; nil when there is no manifest. A manifest
// that does not prove itself ([ReadManifest]) is an error naming it.
func ManifestSegmentRows(crawlDir string, node int) (map[string]int64, error) {
	m, err := ReadManifest(crawlDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, nm := range m.NodeInfo {
		if nm.Node != node {
			continue
		}
		want := make(map[string]int64, len(nm.URLSegments))
		for _, s := range nm.URLSegments {
			want[s.File] = s.Rows
		}
		return want, nil
	}
	return nil, nil
}

// Meta is the metadata of the node's first segment.
func (r *NodeURLReader) Meta() Meta { return r.meta }

// Next advances to the next batch.
func (r *NodeURLReader) Next() bool {
	r.checkStrict()
	for r.err == nil && r.seg != nil {
		if r.seg.Next() {
			r.batch = NewURLBatch(r.seg.Record())
			return true
		}
		r.addInfo(r.seg.Info())
		r.seg.Close()
		r.seg = nil
		r.i++
		if err := r.open(); err != nil {
			r.err = err
		}
		r.checkStrict()
	}
	return false
}

// Batch is the current batch.
func (r *NodeURLReader) Batch() URLBatch { return r.batch }

// Err is the first hard error (a segment that cannot be opened at all).
func (r *NodeURLReader) Err() error { return r.err }

// Segments describes the segments read so far (all, once Next is false).
func (r *NodeURLReader) Segments() []SegmentInfo { return r.infos }

// Close releases the reader.
func (r *NodeURLReader) Close() error {
	if r.seg != nil {
		r.seg.Close()
		r.seg = nil
	}
	return nil
}
