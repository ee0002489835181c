package tracefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
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
	// Checksum is, in a condensed trace, the checksum of the whole file
	// (checksum.go); writers set it. Readers refuse a trace without one;
	// one of an older crawltrace may hold the checksum of its data only.
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
	return prefixedMetadata(keys, vals, m.Checksum)
}

// prefixedMetadata is keys and vals, then the checksum when there is one,
// as Arrow metadata with every key under metaPrefix.
func prefixedMetadata(keys, vals []string, checksum string) arrow.Metadata {
	if checksum != "" {
		keys = append(keys, "checksum")
		vals = append(vals, checksum)
	}
	for i := range keys {
		keys[i] = metaPrefix + keys[i]
	}
	return arrow.NewMetadata(keys, vals)
}

// Partitioners are the partitioner names a trace's metadata may carry:
// the crawler's (recorder/partition's Names), "synthetic" (gentrace) and
// "export" (replay export); "" is read as "host".
var Partitioners = []string{"host", "url", "domain", "consistent", "synthetic", "export"}

// traceKeys are the metadata keys of every trace file, in the order its
// writers write them; condensed traces add subtrace and checksum.
var traceKeys = []string{"format", "version", "kind", "crawl_id", "node", "nodes", "partitioner", "created", "tool_version"}

// tableKeys are the metadata keys of every results table.
var tableKeys = []string{"format", "version", "kind", "table", "crawl_id", "inputs", "params", "created", "tool_version", "checksum"}

// parseMeta reads crawltrace metadata from a schema. It fails with
// ErrCorrupt when the format marker is missing, the version is newer than
// this reader, a key is unknown, missing or repeated, or a value is
// impossible: a node not below the crawl's nodes, no node, an unknown
// partitioner or kind, a creation time that does not parse.
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
	bad := func(format string, args ...any) (Meta, error) {
		return Meta{}, fmt.Errorf("%w: schema metadata: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	var keys []string
	switch m.Kind {
	case KindURLs, KindPages:
		keys = traceKeys
	case KindCondensed:
		keys = append(slices.Clone(traceKeys), "subtrace", "checksum")
	case KindReplayResults, KindScenarioTable:
		keys = tableKeys
	default:
		return bad("unknown kind %q", m.Kind)
	}
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		name, ok := strings.CutPrefix(k, metaPrefix)
		switch {
		case !ok || !slices.Contains(keys, name):
			// Only an older, data-only checksum may be absent from a
			// condensed trace: [CondensedReader] and [VerifyChecksum]
			// refuse a file without one.
			return bad("unknown key %q", k)
		case seen[name]:
			return bad("key %q twice", k)
		}
		seen[name] = true
	}
	for _, k := range keys {
		if !seen[k] && k != "checksum" {
			return bad("no %s%s", metaPrefix, k)
		}
	}
	if m.Created, err = time.Parse(time.RFC3339Nano, get("created")); err != nil {
		return bad("created %q is not a time", get("created"))
	}
	if IsTableKind(m.Kind) {
		return m, nil
	}
	if m.Node, err = strconv.Atoi(get("node")); err != nil {
		return bad("node %q is not a number", get("node"))
	}
	if m.Nodes, err = strconv.Atoi(get("nodes")); err != nil {
		return bad("nodes %q is not a number", get("nodes"))
	}
	if m.Nodes < 1 || m.Node < 0 || m.Node >= m.Nodes {
		return bad("node %d of %d nodes", m.Node, m.Nodes)
	}
	if m.Partitioner != "" && !slices.Contains(Partitioners, m.Partitioner) {
		return bad("unknown partitioner %q", m.Partitioner)
	}
	if m.Kind == KindCondensed && m.Subtrace != SubtraceFull && m.Subtrace != SubtraceCross {
		return bad("subtrace %q, want %q or %q", m.Subtrace, SubtraceFull, SubtraceCross)
	}
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
	// Checksum is the checksum of the whole table file (checksum.go),
	// set by [WriteTable]; an older table may hold its data's only.
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
	return prefixedMetadata(keys, vals, m.Checksum)
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
	if !IsTableKind(m.Kind) {
		return TableMeta{}, fmt.Errorf("%w: schema metadata: kind %q is not a results table", ErrCorrupt, m.Kind)
	}
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
