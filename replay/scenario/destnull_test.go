package scenario

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/crawltrace/crawltrace/internal/arrowtest"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// dest_mismatches applies only to the recorded partitioner and N: other
// rows have a blank CSV cell and an Arrow null, never -1.
func TestDestMismatchesBlankWhenNotApplicable(t *testing.T) {
	res := &PartitionResult{Rows: []PartitionRow{
		{Partitioner: "host", Nodes: 2, DestMismatches: 0},
		{Partitioner: "url", Nodes: 2, DestMismatches: -1},
	}}
	tb := res.Tables()[0]
	var csv bytes.Buffer
	if err := tb.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if !strings.HasSuffix(lines[0], ",dest_mismatches") || !strings.HasSuffix(lines[1], ",0") || !strings.HasSuffix(lines[2], ",") ||
		strings.Contains(csv.String(), "-1") {
		t.Errorf("partition.csv:\n%s", csv.String())
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	if err := tb.WriteArrow(&buf, tracefile.TableMeta{}, mem); err != nil {
		t.Fatal(err)
	}
	r, rec := arrowtest.FirstBatch(t, buf.Bytes(), mem)
	defer r.Close()
	i := len(tb.Columns) - 1
	col := rec.Column(i).(*array.Int64)
	if !rec.Schema().Field(i).Nullable || col.IsNull(0) || col.Value(0) != 0 || !col.IsNull(1) {
		t.Errorf("dest_mismatches column %v (nullable %v)", col, rec.Schema().Field(i).Nullable)
	}
}
