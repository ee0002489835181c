// Package importer turns existing crawl logs into crawltrace raw traces, so
// data from other crawlers gets the same condense and replay analysis as a
// crawl recorded by crawltrace. One file per input format: urls.go (plain
// URL lists); heritrix.go, warc.go and wat.go where present.
//
// Every importer writes through a [Sink], which normalizes URLs with the
// recorder's own normalizer, fills dest with the recorder's own partitioner,
// appends to the per-node URL logs through the shared trace format, and
// writes the manifest. Input that is not a URL is counted with its line or
// record number, never silently dropped and never fatal.
package importer

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// Options configure where and how an import writes its raw trace.
type Options struct {
	// Out is the crawl directory to create. It must not hold a crawl yet.
	Out string
	// Nodes is the number of crawler nodes to simulate (default 1).
	Nodes int
	// Partitioner fills dest: "host" (default), "url", "domain", "consistent".
	Partitioner string
	// Replicas per node for the consistent partitioner (0: its default).
	Replicas int
	// CrawlID names the crawl in the metadata (default: derived from time).
	CrawlID string
	// Raw keeps URLs exactly as given instead of normalizing them.
	Raw bool
	// MaxBadListed caps how many bad lines are listed by number (all are counted).
	MaxBadListed int
	// Writer configures segment flushing and rotation.
	Writer tracefile.WriterConfig
}

// DefaultOptions returns the defaults documented on [Options].
func DefaultOptions() Options {
	return Options{Nodes: 1, Partitioner: "host", MaxBadListed: 20, Writer: tracefile.DefaultWriterConfig()}
}

// Bad is one input line or record that could not be imported.
type Bad struct {
	File   string `json:"file"`
	Line   int64  `json:"line"` // line or record number, 1-based
	Reason string `json:"reason"`
}

// Stats summarize an import.
type Stats struct {
	Files    []string `json:"files"`
	Rows     int64    `json:"rows"`
	PerNode  []int64  `json:"per_node"`
	Cross    int64    `json:"cross"`
	BadLines int64    `json:"bad_lines"`
	Bad      []Bad    `json:"bad,omitempty"` // the first MaxBadListed
	Skipped  int64    `json:"skipped"`       // records deliberately not URLs (e.g. WARC request records)
}

// Sink writes imported URLs to a raw trace directory. Not safe for
// concurrent use.
type Sink struct {
	opts    Options
	part    partition.Partitioner
	writers []*tracefile.URLWriter
	meta    tracefile.Meta
	Stats   Stats
	closed  bool
}

// NewSink creates opts.Out and one URL log per node.
func NewSink(opts Options) (*Sink, error) {
	d := DefaultOptions()
	if opts.Nodes <= 0 {
		opts.Nodes = d.Nodes
	}
	if opts.Partitioner == "" {
		opts.Partitioner = d.Partitioner
	}
	if opts.MaxBadListed == 0 {
		opts.MaxBadListed = d.MaxBadListed
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("%w: import: no output directory", tracefile.ErrBadInput)
	}
	if opts.Nodes > 65535 {
		return nil, fmt.Errorf("%w: import: %d nodes is more than the trace format's 65535", tracefile.ErrBadInput, opts.Nodes)
	}
	if _, err := os.Stat(tracefile.NodeDir(opts.Out, 0)); err == nil {
		return nil, fmt.Errorf("%w: import: %s already holds a crawl", tracefile.ErrBadInput, opts.Out)
	}
	part, err := partition.New(opts.Partitioner, opts.Nodes, opts.Replicas)
	if err != nil {
		return nil, fmt.Errorf("%w: import: %v", tracefile.ErrBadInput, err)
	}
	if opts.CrawlID == "" {
		opts.CrawlID = "import-" + time.Now().UTC().Format("20060102T150405Z")
	}
	s := &Sink{opts: opts, part: part}
	s.meta = tracefile.Meta{CrawlID: opts.CrawlID, Nodes: opts.Nodes, Partitioner: part.Name(), Created: time.Now()}
	s.Stats.PerNode = make([]int64, opts.Nodes)
	for n := 0; n < opts.Nodes; n++ {
		m := s.meta
		m.Node = n
		w, err := tracefile.CreateURLWriter(tracefile.NodeDir(opts.Out, n), m, opts.Writer)
		if err != nil {
			s.abort()
			return nil, err
		}
		s.writers = append(s.writers, w)
	}
	return s, nil
}

// Nodes is the number of simulated nodes.
func (s *Sink) Nodes() int { return s.opts.Nodes }

// Normalize returns the URL as it will be logged (normalized unless Raw).
func (s *Sink) Normalize(u string) (string, error) {
	if s.opts.Raw {
		return u, nil
	}
	return urlnorm.Normalize(u)
}

// NodeOf is the node the partitioner assigns a (logged-form) URL to.
func (s *Sink) NodeOf(u string) int { return s.part.Node(u) }

// Add logs rec at node's host splitter. rec.URL must already be in logged
// form (see Normalize). dest < 0 means: assign with the partitioner.
func (s *Sink) Add(node int, dest int, rec tracefile.URLRecord) error {
	if node < 0 || node >= s.opts.Nodes {
		return fmt.Errorf("import: node %d out of range 0..%d", node, s.opts.Nodes-1)
	}
	if dest < 0 {
		dest = s.part.Node(rec.URL)
	}
	rec.Dest = uint16(dest)
	if rec.Time == 0 {
		rec.Time = time.Now().UnixNano()
	}
	if _, err := s.writers[node].Append(rec); err != nil {
		return err
	}
	s.Stats.Rows++
	s.Stats.PerNode[node]++
	if dest != node {
		s.Stats.Cross++
	}
	return nil
}

// BadLine counts an input line or record that was not imported.
func (s *Sink) BadLine(file string, line int64, reason string) {
	s.Stats.BadLines++
	if len(s.Stats.Bad) < s.opts.MaxBadListed {
		s.Stats.Bad = append(s.Stats.Bad, Bad{File: file, Line: line, Reason: reason})
	}
}

// Close flushes every log and writes the manifest and import-stats.json.
func (s *Sink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	man := tracefile.NewManifest(s.meta)
	var err error
	for n, w := range s.writers {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = cerr
		}
		man.AddNode(n, w.Segments(), nil)
	}
	if err != nil {
		return err
	}
	man.Finished = time.Now().UTC()
	if err := tracefile.WriteManifest(s.opts.Out, man); err != nil {
		return err
	}
	return tracefile.WriteJSON(s.opts.Out+"/import-stats.json", s.Stats)
}

// Abort closes the logs without a manifest and removes the output, for a
// failed import.
func (s *Sink) Abort() { s.abort() }

func (s *Sink) abort() {
	s.closed = true
	for _, w := range s.writers {
		w.Close()
	}
	os.RemoveAll(s.opts.Out)
}

// importAll runs one file importer over files into a new Sink, removing
// the output on failure and when nothing was imported. A file that cannot
// be opened fails the import; a damaged one is counted as bad.
func importAll(files []string, opts Options, one func(s *Sink, src *sources, path string, r io.Reader) error) (*Stats, error) {
	s, err := NewSink(opts)
	if err != nil {
		return nil, err
	}
	src := newSources()
	for _, path := range files {
		if err := withInput(s, path, func(r io.Reader) error { return one(s, src, path, r) }); err != nil {
			s.Abort()
			return nil, err
		}
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if s.Stats.Rows == 0 {
		os.RemoveAll(opts.Out)
		return &s.Stats, fmt.Errorf("%w: import: no URLs in %s (%d bad, %d skipped)", tracefile.ErrBadInput, strings.Join(files, ", "), s.Stats.BadLines, s.Stats.Skipped)
	}
	return &s.Stats, nil
}

// withInput opens path ("-" is standard input), adds it to the Sink's
// files and calls withReader.
func withInput(s *Sink, path string, f func(io.Reader) error) error {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		file, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: import: %v", tracefile.ErrBadInput, err)
		}
		defer file.Close()
		r = file
	}
	s.Stats.Files = append(s.Stats.Files, path)
	return withReader(s, path, r, f)
}

// withReader decompresses r when it starts with the gzip magic
// (multi-member gzip reads as one stream) and calls f with it. A gzip
// header that does not parse is counted as a bad line 1.
func withReader(s *Sink, path string, r io.Reader, f func(io.Reader) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			s.BadLine(path, 1, "gzip: "+err.Error())
			return nil
		}
		defer zr.Close()
		return f(zr)
	}
	return f(br)
}
