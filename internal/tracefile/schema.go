package tracefile

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// URL kinds, the values of the raw log's kind column.
const (
	URLSeed     = "seed"
	URLLink     = "link"
	URLRedirect = "redirect"
)

var tsNS = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// URLSchema returns the raw URL log schema with metadata m.
func URLSchema(m Meta) *arrow.Schema {
	m.Kind = KindURLs
	md := m.metadata()
	return arrow.NewSchema([]arrow.Field{
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "time", Type: tsNS},
		{Name: "url", Type: arrow.BinaryTypes.String},
		{Name: "kind", Type: arrow.BinaryTypes.String},
		{Name: "tag", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "source", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "worker", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "dest", Type: arrow.PrimitiveTypes.Uint16},
	}, &md)
}

// PageSchema returns the page log schema with metadata m.
func PageSchema(m Meta) *arrow.Schema {
	m.Kind = KindPages
	md := m.metadata()
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "time", Type: tsNS},
		{Name: "url", Type: arrow.BinaryTypes.String},
		{Name: "status", Type: arrow.PrimitiveTypes.Int32},
		{Name: "content_type", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bytes", Type: arrow.PrimitiveTypes.Int64},
		{Name: "truncated", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "duration_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "links", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "unique_links", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "redirect", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "worker", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "quality", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, &md)
}

// URLRecord is one row of the raw URL log.
type URLRecord struct {
	Seq    uint64 // set by the writer when appended through URLWriter.Append
	Time   int64  // Unix nanoseconds
	URL    string
	Kind   string // URLSeed, URLLink or URLRedirect
	Tag    string // "" is written as null
	Source uint64
	Worker uint16
	Dest   uint16
}

// PageRecord is one row of the page log: one fetch attempt.
type PageRecord struct {
	ID          uint64
	Time        int64 // Unix nanoseconds, when the fetch started
	URL         string
	Status      int32 // HTTP status; 0 when no response was received
	ContentType string
	Bytes       int64 // body bytes read (after decompression)
	Truncated   bool  // the body hit the size cap
	DurationNS  int64
	Links       uint32 // links extracted, duplicates included
	UniqueLinks uint32 // distinct links on the page
	Redirect    string // resolved Location of a 3xx
	Error       string // fetch error text
	Worker      uint16
	Quality     float64 // NaN is written as null
}
