package tracefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ManifestName is the manifest's file name inside a crawl directory.
const ManifestName = "manifest.json"

// Manifest describes a crawl directory: its nodes and their segments. The
// writer of a crawl (recorder, importer) writes it when the crawl ends; a
// crawl killed before that has no manifest (or an old one), and [ScanCrawl]
// rebuilds the same description from the files themselves.
type Manifest struct {
	Format      string         `json:"format"`
	Version     int            `json:"version"`
	CrawlID     string         `json:"crawl_id"`
	Nodes       int            `json:"nodes"`
	Partitioner string         `json:"partitioner"`
	Created     time.Time      `json:"created"`
	Finished    time.Time      `json:"finished,omitempty"`
	ToolVersion string         `json:"tool_version"`
	NodeInfo    []NodeManifest `json:"node_info"`
	// Sealed is set by [ReadManifest] when the file carried its checksum
	// (sealed JSON); false for a manifest of an older crawltrace.
	Sealed bool `json:"-"`
}

// NodeManifest lists one node's segments.
type NodeManifest struct {
	Node         int           `json:"node"`
	URLRows      int64         `json:"url_rows"`
	PageRows     int64         `json:"page_rows"`
	URLSegments  []SegmentInfo `json:"url_segments"`
	PageSegments []SegmentInfo `json:"page_segments"`
}

// NewManifest returns a manifest for a crawl with meta m and no nodes yet.
func NewManifest(m Meta) *Manifest {
	return &Manifest{Format: FormatName, Version: FormatVersion, CrawlID: m.CrawlID, Nodes: m.Nodes,
		Partitioner: m.Partitioner, Created: m.Created.UTC(), ToolVersion: ToolVersion}
}

// AddNode records a node's segments (as returned by the writers' Segments
// methods after Close) and sums its rows.
func (m *Manifest) AddNode(node int, urls, pages []SegmentInfo) {
	nm := NodeManifest{Node: node, URLSegments: urls, PageSegments: pages}
	for _, s := range urls {
		nm.URLRows += s.Rows
	}
	for _, s := range pages {
		nm.PageRows += s.Rows
	}
	m.NodeInfo = append(m.NodeInfo, nm)
	sort.Slice(m.NodeInfo, func(i, j int) bool { return m.NodeInfo[i].Node < m.NodeInfo[j].Node })
}

// URLRows is the total number of URL rows over all nodes.
func (m *Manifest) URLRows() int64 {
	var n int64
	for _, nm := range m.NodeInfo {
		n += nm.URLRows
	}
	return n
}

// WriteManifest writes m to dir/manifest.json atomically and durably, as
// sealed JSON ([MarshalSealed]): with a checksum of itself.
func WriteManifest(dir string, m *Manifest) error {
	return WriteSealedJSON(filepath.Join(dir, ManifestName), m)
}

// WriteJSON writes v as indented JSON to path atomically (temporary file,
// then rename), so readers never see a half-written file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteFileAtomic writes path through a temporary file that fill writes and
// that is renamed into place only when fill and the close succeed, so a
// failed or interrupted write never leaves a file that looks complete.
func WriteFileAtomic(path string, fill func(w io.Writer) error) error {
	return writeFile(path, fill, false)
}

// WriteFileDurable is WriteFileAtomic that also syncs the file before the
// rename and the directory after it, so that after a power loss path holds
// the new content or the old, never an empty file. For small state files
// whose going backwards would be wrong (an incarnation number).
func WriteFileDurable(path string, fill func(w io.Writer) error) error {
	return writeFile(path, fill, true)
}

func writeFile(path string, fill func(w io.Writer) error, durable bool) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	err = fill(f)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("tracefile: write %s: %w", path, err)
	}
	if durable {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			err = d.Sync()
			d.Close()
			if err != nil {
				return fmt.Errorf("tracefile: sync %s: %w", filepath.Dir(path), err)
			}
		}
	}
	return nil
}

// ReadManifest reads dir/manifest.json and proves it: its checksum, its
// keys (none unknown, none missing) and its values (nodes, node numbers,
// row sums, segment file names). A manifest written before manifests
// carried a checksum is read with its keys checked, and Sealed false.
// Every error but a missing file wraps [ErrCorrupt] and names the file.
func ReadManifest(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	var m Manifest
	err = UnmarshalSealed(p, b, &m)
	switch {
	case err == nil:
		m.Sealed = true
	case errors.Is(err, ErrUnsealed):
	default:
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, p, err)
	}
	return &m, nil
}

// check refuses a manifest no crawltrace writes.
func (m *Manifest) check() error {
	if m.Format != FormatName {
		return errors.New("not a crawltrace manifest")
	}
	if m.Version < 1 || m.Version > FormatVersion {
		return fmt.Errorf("format version %d; this build reads 1 to %d", m.Version, FormatVersion)
	}
	if m.Nodes < 1 {
		return fmt.Errorf("a crawl of %d nodes", m.Nodes)
	}
	if m.Partitioner != "" && !slices.Contains(Partitioners, m.Partitioner) {
		return fmt.Errorf("unknown partitioner %q", m.Partitioner)
	}
	seen := map[int]bool{}
	for _, nm := range m.NodeInfo {
		if nm.Node < 0 || nm.Node >= m.Nodes || seen[nm.Node] {
			return fmt.Errorf("node %d listed in a crawl of %d nodes (or twice)", nm.Node, m.Nodes)
		}
		seen[nm.Node] = true
		for _, l := range []struct {
			prefix string
			segs   []SegmentInfo
			rows   int64
			key    string
		}{{PrefixURLs, nm.URLSegments, nm.URLRows, "url_rows"}, {PrefixPages, nm.PageSegments, nm.PageRows, "page_rows"}} {
			var rows int64
			for _, s := range l.segs {
				if s.File != filepath.Base(s.File) || !strings.HasPrefix(s.File, l.prefix+"-") || !strings.HasSuffix(s.File, SegmentExt) {
					return fmt.Errorf("node %d: segment file %q is not a %s segment's name", nm.Node, s.File, l.prefix)
				}
				if s.Rows < 0 || s.Bytes < 0 || s.Batches < 0 {
					return fmt.Errorf("node %d: segment %s: negative rows, batches or bytes", nm.Node, s.File)
				}
				if s.XXH64 != "" && !isHash(s.XXH64) {
					return fmt.Errorf("node %d: segment %s: xxhash64 %q is not 16 hex digits", nm.Node, s.File, s.XXH64)
				}
				rows += s.Rows
			}
			if rows != l.rows {
				return fmt.Errorf("node %d: %s %d, but its segments hold %d rows", nm.Node, l.key, l.rows, rows)
			}
		}
	}
	return nil
}

// isHash reports whether s is 16 lowercase hex digits ([HashString]).
func isHash(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CrawlNodes lists the node numbers that have a directory in crawlDir.
func CrawlNodes(crawlDir string) ([]int, error) {
	st, err := os.Stat(crawlDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: no such directory", ErrBadInput, crawlDir)
		}
		return nil, InputError(err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s: not a crawl directory", ErrBadInput, crawlDir)
	}
	ents, err := os.ReadDir(crawlDir)
	if err != nil {
		return nil, InputError(err)
	}
	var nodes []int
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "node-") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node-"))
		if err == nil && n >= 0 {
			nodes = append(nodes, n)
		}
	}
	sort.Ints(nodes)
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: %s: no node-NNN directories (not a crawl directory, or an empty crawl)", ErrBadInput, crawlDir)
	}
	return nodes, nil
}
