package tracefile

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// PageRow copies row i of a page-log record batch into a PageRecord.
func PageRow(rec arrow.RecordBatch, i int) PageRecord {
	str := func(c int) string {
		a := rec.Column(c).(*array.String)
		if a.IsNull(i) {
			return ""
		}
		return strings.Clone(a.Value(i))
	}
	q := math.NaN()
	if qa := rec.Column(13).(*array.Float64); qa.IsValid(i) {
		q = qa.Value(i)
	}
	return PageRecord{
		ID:          rec.Column(0).(*array.Uint64).Value(i),
		Time:        int64(rec.Column(1).(*array.Timestamp).Value(i)),
		URL:         str(2),
		Status:      rec.Column(3).(*array.Int32).Value(i),
		ContentType: str(4),
		Bytes:       rec.Column(5).(*array.Int64).Value(i),
		Truncated:   rec.Column(6).(*array.Boolean).Value(i),
		DurationNS:  rec.Column(7).(*array.Int64).Value(i),
		Links:       rec.Column(8).(*array.Uint32).Value(i),
		UniqueLinks: rec.Column(9).(*array.Uint32).Value(i),
		Redirect:    str(10),
		Error:       str(11),
		Worker:      rec.Column(12).(*array.Uint16).Value(i),
		Quality:     q,
	}
}
