package tracefile

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// FormatName and FormatVersion identify crawltrace files.
const (
	FormatName    = "crawltrace"
	FormatVersion = 1
)

// ToolVersion is the crawltrace version written into every file.
var ToolVersion = "0.1.0"

// ErrCorrupt marks a file that is not a valid crawltrace file: not Arrow,
// truncated before its schema, or with a wrong schema.
var ErrCorrupt = errors.New("corrupt trace file")

// ErrBadInput marks an input that is valid Arrow but not what was asked for,
// or a directory with nothing to read.
var ErrBadInput = errors.New("bad input")

// File kinds, stored under the crawltrace.kind metadata key.
const (
	KindURLs      = "urls"
	KindPages     = "pages"
	KindCondensed = "condensed"
)

// Subtraces of a condensed trace.
const (
	SubtraceFull  = "full"
	SubtraceCross = "cross"
)

// Meta is the schema metadata carried by every crawltrace file.
type Meta struct {
	Kind        string    // KindURLs, KindPages or KindCondensed
	CrawlID     string    // identifies the crawl (free text, e.g. a timestamp)
	Node        int       // this file's crawler node
	Nodes       int       // number of nodes in the crawl
	Partitioner string    // host-splitter partitioner name, e.g. "host"
	Created     time.Time // when the file was created
	ToolVersion string    // crawltrace version that wrote it (set by writers)
	Subtrace    string    // condensed only: SubtraceFull or SubtraceCross
}

const metaPrefix = "crawltrace."

func (m Meta) metadata() arrow.Metadata {
	created := m.Created
	if created.IsZero() {
		created = time.Now()
	}
	tv := m.ToolVersion
	if tv == "" {
		tv = ToolVersion
	}
	keys := []string{"format", "version", "kind", "crawl_id", "node", "nodes", "partitioner", "created", "tool_version"}
	vals := []string{FormatName, strconv.Itoa(FormatVersion), m.Kind, m.CrawlID, strconv.Itoa(m.Node), strconv.Itoa(m.Nodes),
		m.Partitioner, created.UTC().Format(time.RFC3339Nano), tv}
	if m.Subtrace != "" {
		keys = append(keys, "subtrace")
		vals = append(vals, m.Subtrace)
	}
	for i := range keys {
		keys[i] = metaPrefix + keys[i]
	}
	return arrow.NewMetadata(keys, vals)
}

// parseMeta reads crawltrace metadata from a schema. It fails with
// ErrCorrupt when the format marker is missing or the version is newer than
// this reader.
func parseMeta(md arrow.Metadata) (Meta, error) {
	get := func(k string) string {
		i := md.FindKey(metaPrefix + k)
		if i < 0 {
			return ""
		}
		return md.Values()[i]
	}
	if get("format") != FormatName {
		return Meta{}, fmt.Errorf("%w: no crawltrace format marker in schema metadata", ErrCorrupt)
	}
	v, err := strconv.Atoi(get("version"))
	if err != nil || v < 1 || v > FormatVersion {
		return Meta{}, fmt.Errorf("%w: unsupported format version %q", ErrCorrupt, get("version"))
	}
	m := Meta{
		Kind:        get("kind"),
		CrawlID:     get("crawl_id"),
		Partitioner: get("partitioner"),
		ToolVersion: get("tool_version"),
		Subtrace:    get("subtrace"),
	}
	m.Node, _ = strconv.Atoi(get("node"))
	m.Nodes, _ = strconv.Atoi(get("nodes"))
	m.Created, _ = time.Parse(time.RFC3339Nano, get("created"))
	return m, nil
}
