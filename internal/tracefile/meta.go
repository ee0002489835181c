package tracefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"
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
	// Checksum is, in a condensed trace, the checksum of its data (see
	// [ChecksumOf]); writers set it, and it is "" in files written before
	// it existed.
	Checksum string
}

const metaPrefix = "crawltrace."

// stamp is when and by which version a file was written: now and this
// version where the caller left them unset.
func stamp(created time.Time, tv string) (time.Time, string) {
	if created.IsZero() {
		created = time.Now()
	}
	if tv == "" {
		tv = ToolVersion
	}
	return created, tv
}

func (m Meta) metadata() arrow.Metadata {
	created, tv := stamp(m.Created, m.ToolVersion)
	keys := []string{"format", "version", "kind", "crawl_id", "node", "nodes", "partitioner", "created", "tool_version"}
	vals := []string{FormatName, strconv.Itoa(FormatVersion), m.Kind, m.CrawlID, strconv.Itoa(m.Node), strconv.Itoa(m.Nodes),
		m.Partitioner, created.UTC().Format(time.RFC3339Nano), tv}
	if m.Subtrace != "" {
		keys = append(keys, "subtrace")
		vals = append(vals, m.Subtrace)
	}
	if m.Checksum != "" {
		keys = append(keys, "checksum")
		vals = append(vals, m.Checksum)
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
		Checksum:    get("checksum"),
	}
	m.Node, _ = strconv.Atoi(get("node"))
	m.Nodes, _ = strconv.Atoi(get("nodes"))
	m.Created, _ = time.Parse(time.RFC3339Nano, get("created"))
	return m, nil
}

// Kinds of the results tables crawltrace writes as Arrow IPC files.
const (
	KindReplayResults = "replay-results" // replay/results.arrow
	KindScenarioTable = "scenario-table" // scenario/<question>.arrow
)

// TableMeta is the schema metadata of a results table (an Arrow IPC file
// that is not a trace): what wrote it, from what, and how. It carries the
// same format marker as the traces, so [Inspect] opens it.
type TableMeta struct {
	Kind    string   // KindReplayResults or KindScenarioTable
	Table   string   // table name, e.g. "results", "partition"
	CrawlID string   // the crawl the inputs came from; several are joined with ","
	Inputs  []string // input files or directories, as given
	// Params are the run's parameters (policies, sizes, seeds, ...), by
	// name, as text.
	Params      map[string]string
	Created     time.Time // when the table was written (now when zero)
	ToolVersion string    // crawltrace version (ToolVersion when empty)
	// Checksum is the checksum of the table's data (see [ChecksumOf]),
	// set by [WriteTable]; "" in tables written before it existed.
	Checksum string
}

// Metadata encodes m as Arrow schema metadata under the crawltrace. keys;
// Inputs and Params are JSON.
func (m TableMeta) Metadata() arrow.Metadata {
	created, tv := stamp(m.Created, m.ToolVersion)
	inputs, _ := json.Marshal(m.Inputs)
	if m.Inputs == nil {
		inputs = []byte("[]")
	}
	params, _ := json.Marshal(m.Params)
	if m.Params == nil {
		params = []byte("{}")
	}
	keys := []string{"format", "version", "kind", "table", "crawl_id", "inputs", "params", "created", "tool_version"}
	vals := []string{FormatName, strconv.Itoa(FormatVersion), m.Kind, m.Table, m.CrawlID, string(inputs), string(params),
		created.UTC().Format(time.RFC3339Nano), tv}
	if m.Checksum != "" {
		keys = append(keys, "checksum")
		vals = append(vals, m.Checksum)
	}
	for i := range keys {
		keys[i] = metaPrefix + keys[i]
	}
	return arrow.NewMetadata(keys, vals)
}

// ParseTableMeta reads [TableMeta] from schema metadata. It fails with
// [ErrCorrupt] when the format marker is missing, the version is newer
// than this reader, or Inputs or Params are not valid JSON.
func ParseTableMeta(md arrow.Metadata) (TableMeta, error) {
	if _, err := parseMeta(md); err != nil {
		return TableMeta{}, err
	}
	get := func(k string) string {
		if i := md.FindKey(metaPrefix + k); i >= 0 {
			return md.Values()[i]
		}
		return ""
	}
	m := TableMeta{Kind: get("kind"), Table: get("table"), CrawlID: get("crawl_id"), ToolVersion: get("tool_version"), Checksum: get("checksum")}
	m.Created, _ = time.Parse(time.RFC3339Nano, get("created"))
	if s := get("inputs"); s != "" {
		if err := json.Unmarshal([]byte(s), &m.Inputs); err != nil {
			return TableMeta{}, fmt.Errorf("%w: crawltrace.inputs: %v", ErrCorrupt, err)
		}
	}
	if s := get("params"); s != "" {
		if err := json.Unmarshal([]byte(s), &m.Params); err != nil {
			return TableMeta{}, fmt.Errorf("%w: crawltrace.params: %v", ErrCorrupt, err)
		}
	}
	return m, nil
}

// IsTableKind reports whether kind is a results-table kind.
func IsTableKind(kind string) bool {
	return kind == KindReplayResults || kind == KindScenarioTable
}

// InputError wraps err, an error opening or listing an input path, with
// [ErrBadInput] when the path itself is the problem: it does not exist, is
// a symlink loop, a directory where a file is wanted or a file where a
// directory is, or cannot be read for lack of permission. Other errors
// (I/O failures) are only prefixed, as failures while running.
func InputError(err error) error {
	if isPathProblem(err) {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return fmt.Errorf("tracefile: %w", err)
}

func isPathProblem(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ELOOP) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENAMETOOLONG)
}
