package tracefile

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// WriteTable writes rec as the one record batch of an Arrow IPC file with
// m's metadata added to rec's schema. Results tables (replay results,
// scenario tables) are written through it so that every one carries the
// tool version, its inputs, the crawl id and the run's parameters.
func WriteTable(w io.Writer, rec arrow.RecordBatch, m TableMeta, mem memory.Allocator) error {
	md := m.Metadata()
	schema := arrow.NewSchema(rec.Schema().Fields(), &md)
	rec = array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
	defer rec.Release()
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	return nil
}

// arrowKind returns the crawltrace kind of an Arrow IPC file.
func arrowKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return "", fmt.Errorf("%w: %s: not an Arrow file (%v)", ErrCorrupt, path, err)
	}
	defer r.Close()
	m, err := parseMeta(r.Schema().Metadata())
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return m.Kind, nil
}

// inspectTable describes a results table: metadata, schema and first rows.
func inspectTable(w io.Writer, path string, rows int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return fmt.Errorf("%w: %s: not an Arrow file (%v)", ErrCorrupt, path, err)
	}
	defer r.Close()
	m, err := ParseTableMeta(r.Schema().Metadata())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	what := "replay results"
	if m.Kind == KindScenarioTable {
		what = "scenario table"
	}
	fmt.Fprintf(w, "%s: %s %q (Arrow IPC file)\n", path, what, m.Table)
	fmt.Fprintf(w, "  kind %s, crawl %q, created %s, tool %s\n", m.Kind, m.CrawlID, m.Created.Format(time.RFC3339), m.ToolVersion)
	fmt.Fprintf(w, "  inputs: %s\n", strings.Join(m.Inputs, ", "))
	var keys []string
	for k := range m.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ps []string
	for _, k := range keys {
		ps = append(ps, k+"="+m.Params[k])
	}
	fmt.Fprintf(w, "  params: %s\n", strings.Join(ps, ", "))
	fmt.Fprintf(w, "  schema: %s\n", schemaLine(r.Schema().String()))
	var total int64
	shown := 0
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return fmt.Errorf("%w: %s: batch %d: %v", ErrCorrupt, path, i, err)
		}
		total += rec.NumRows()
		for row := 0; row < int(rec.NumRows()) && shown < rows; row++ {
			cells := make([]string, rec.NumCols())
			for c := range cells {
				col := rec.Column(c)
				if col.IsNull(row) {
					cells[c] = "-"
				} else {
					cells[c] = col.ValueStr(row)
				}
			}
			fmt.Fprintf(w, "  %s\n", strings.Join(cells, " "))
			shown++
		}
	}
	fmt.Fprintf(w, "  %d rows\n", total)
	return nil
}
