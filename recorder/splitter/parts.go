package splitter

// The state the splitter's goroutine owns, saved and restored by the
// splitter itself: its logs (the segments part), its DUE (the due part)
// and its counters (its share of the node's counters part). The format
// of each part is in recorder/checkpoint's package doc.

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/crawltrace/crawltrace/internal/counters"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
)

// Logs say where and how a node's URL and page logs are written.
type Logs struct {
	// Dir is the node's directory (tracefile.NodeDir), Meta the metadata
	// of its segments, Writer the configuration of their writers.
	Dir    string
	Meta   tracefile.Meta
	Writer tracefile.WriterConfig
	// DiscardDir receives the log rows a resume cuts: those written
	// after the checkpoint it resumes from, or every row when there is
	// none. Discarded (when set) is told how many URL and page rows each
	// cut moved there.
	DiscardDir string
	Discarded  func(urls, pages int64)
}

// OpenLogs starts the node's URL and page logs, after the segments
// already in its directory: a fresh start calls it, and a resume once the
// checkpoint is loaded (it does nothing when the segments part opened
// them, or with no Logs). Before Run.
func (s *Splitter) OpenLogs() error {
	if s.logs == nil || s.urlw != nil {
		return nil
	}
	uw, err := tracefile.CreateURLWriter(s.logs.Dir, s.logs.Meta, s.logs.Writer)
	if err != nil {
		return fmt.Errorf("recorder: node %d: %w", s.node, err)
	}
	pw, err := tracefile.CreatePageWriter(s.logs.Dir, s.logs.Meta, s.logs.Writer)
	if err != nil {
		uw.Close()
		return fmt.Errorf("recorder: node %d: %w", s.node, err)
	}
	s.urlw, s.pagew = uw, pw
	return nil
}

// DiscardLogs moves every segment of the node's logs to Logs.DiscardDir:
// the crawl resumes with no checkpoint (it was killed before its first
// one) and starts again from its seeds. Before Run.
func (s *Splitter) DiscardLogs() error {
	if s.logs == nil {
		return nil
	}
	urls, err := tracefile.DiscardLog(s.logs.Dir, tracefile.PrefixURLs, tracefile.KindURLs, s.logs.DiscardDir)
	s.discarded(urls, 0)
	if err != nil {
		// Segments left in place would be appended to by the new run.
		return err
	}
	pages, err := tracefile.DiscardLog(s.logs.Dir, tracefile.PrefixPages, tracefile.KindPages, s.logs.DiscardDir)
	s.discarded(0, pages)
	return err
}

func (s *Splitter) discarded(urls, pages int64) {
	if s.logs.Discarded != nil {
		s.logs.Discarded(urls, pages)
	}
}

// closeLogs closes the URL and page logs.
func (s *Splitter) closeLogs() {
	if s.urlw != nil {
		if err := s.urlw.Close(); err != nil {
			s.fail(err)
		}
	}
	if s.pagew != nil {
		if err := s.pagew.Close(); err != nil {
			s.fail(err)
		}
	}
}

// Segments are a node's log segments as its manifest lists them.
type Segments struct {
	URLs, Pages []tracefile.SegmentInfo
}

// segments are the segments of the logs the splitter still holds: a log
// whose write failed was dropped, and its segments are not listed.
func (s *Splitter) segments() Segments {
	var v Segments
	if s.urlw != nil {
		v.URLs = s.urlw.Segments()
	}
	if s.pagew != nil {
		v.Pages = s.pagew.Segments()
	}
	return v
}

// Parts are the splitter's checkpoint parts, in the order a node saves
// and loads them: its logs' positions ("segments": loading it cuts the
// logs back to the checkpoint and opens writers that continue them) and
// its DUE ("due"). They are saved at a checkpoint's cut (from a Cut's
// Park, or after Stop or Close) and loaded before Run.
func (s *Splitter) Parts() []checkpoint.Part {
	return []checkpoint.Part{segmentsPart{s}, duePart{s}}
}

// SegmentsPartName is the segments part's file name in a checkpoint.
const SegmentsPartName = "segments"

// segmentsPart saves the positions of the node's log writers.
type segmentsPart struct{ s *Splitter }

// savedLog is a log writer's position at a checkpoint; loading cuts the
// log back to it with tracefile.RestoreLog. gob writes the names of
// savedLog and savedSegments (and of their fields) into the checkpoint:
// renaming them changes its bytes (TestSegmentsPartPinned).
type savedLog struct {
	Done    []tracefile.SegmentInfo
	Open    tracefile.SegmentInfo // File "" when no segment was open
	NextSeq uint64
}

type savedSegments struct {
	URLs, Pages savedLog
}

func (segmentsPart) Name() string { return SegmentsPartName }

func (p segmentsPart) Save(w io.Writer) error {
	s := p.s
	var v savedSegments
	var err error
	if s.urlw != nil {
		if v.URLs.Done, v.URLs.Open, err = s.urlw.Checkpoint(); err != nil {
			return err
		}
		v.URLs.NextSeq = s.urlw.Rows()
	}
	if s.pagew != nil {
		if v.Pages.Done, v.Pages.Open, err = s.pagew.Checkpoint(); err != nil {
			return err
		}
	}
	return gob.NewEncoder(w).Encode(&v)
}

func (p segmentsPart) Load(r io.Reader) error {
	var v savedSegments
	if err := gob.NewDecoder(r).Decode(&v); err != nil {
		return err
	}
	s := p.s
	if s.logs == nil {
		return nil
	}
	urls, du, err := tracefile.RestoreLog(s.logs.Dir, tracefile.PrefixURLs, tracefile.KindURLs, v.URLs.Done, v.URLs.Open, s.logs.DiscardDir)
	if err != nil {
		return err
	}
	pages, dp, err := tracefile.RestoreLog(s.logs.Dir, tracefile.PrefixPages, tracefile.KindPages, v.Pages.Done, v.Pages.Open, s.logs.DiscardDir)
	if err != nil {
		return err
	}
	s.discarded(du, dp)
	if err := s.OpenLogs(); err != nil {
		return err
	}
	s.urlw.Continue(urls)
	s.urlw.SetNextSeq(v.URLs.NextSeq)
	s.pagew.Continue(pages)
	return nil
}

// Position is a log's position as a checkpoint's segments part records
// it: the segments closed, and the checkpointed prefix of the one open
// (File "" when none was).
type Position struct {
	Done []tracefile.SegmentInfo
	Open tracefile.SegmentInfo
}

// ReadSegmentsPart reads the log positions the segments part of the
// checkpoint in dir records (the checkpoint proved first, as
// checkpoint.Find proves it), for the checks of a resume and of
// crawltrace inspect --verify. A checkpoint without one (taken with no
// trace) records none. A part that does not decode is an error naming
// it, matching tracefile.ErrCorrupt.
func ReadSegmentsPart(dir string) (urls, pages Position, err error) {
	var v savedSegments
	part := filepath.Join(dir, SegmentsPartName)
	f, err := os.Open(part)
	if errors.Is(err, fs.ErrNotExist) {
		return Position{}, Position{}, nil
	}
	if err != nil {
		return Position{}, Position{}, fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, part, err)
	}
	defer f.Close()
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&v); err != nil {
		return Position{}, Position{}, fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, part, err)
	}
	return Position{v.URLs.Done, v.URLs.Open}, Position{v.Pages.Done, v.Pages.Open}, nil
}

// duePart saves the node's DUE (the disk one, once the in-memory one gave
// way to it).
type duePart struct{ s *Splitter }

func (duePart) Name() string             { return "due" }
func (p duePart) Save(w io.Writer) error { return p.s.due.Save(w) }
func (p duePart) Load(r io.Reader) error { return p.s.due.Load(r) }

// Free closes the DUE (a disk DUE's files) once the node's last
// checkpoint is saved: after Stop or Close, and the final checkpoint.
func (s *Splitter) Free() error { return s.due.Close() }

// CountersPart is the splitter's share of the node's counters part, the
// part that saves every stage's counters in one map by their stats.json
// names (internal/counters): Save puts the splitter's [Stats] in the map,
// at a checkpoint's cut; Load takes them from it, before Run.
type CountersPart struct{ s *Splitter }

// CountersPart is the splitter's share of the node's counters part.
func (s *Splitter) CountersPart() CountersPart { return CountersPart{s} }

// Save puts the splitter's counters in m by name.
func (p CountersPart) Save(m map[string]int64) { counters.Put(m, p.s.stats) }

// Load sets the splitter's counters to m's (a counter m lacks is zero)
// and publishes them.
func (p CountersPart) Load(m map[string]int64) {
	p.s.stats = counters.Get[Stats](m)
	p.s.publish()
}

var (
	_ checkpoint.Part = segmentsPart{}
	_ checkpoint.Part = duePart{}
)
