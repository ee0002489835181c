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
	"github.com/cespare/xxhash/v2"
)

// WriteTable writes rec as the one record batch of an Arrow IPC file with
// m's metadata, and the checksum of rec's data, added to rec's schema. Results tables (replay results,
// scenario tables) are written through it so that every one carries the
// tool version, its inputs, the crawl id and the run's parameters.
func WriteTable(w io.Writer, rec arrow.RecordBatch, m TableMeta, mem memory.Allocator) error {
	// The checksum is of the whole file (checksum.go): hashed as it is
	// written, patched into the footer's schema at the end.
	m.Checksum = checksumPending
	md := m.Metadata()
	schema := arrow.NewSchema(rec.Schema().Fields(), &md)
	rec = array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
	defer rec.Release()
	fp := &footerPatcher{w: w, sum: xxhash.New()}
	fw, err := ipc.NewFileWriter(fp, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	fp.capture = true
	if err := fw.Close(); err != nil {
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	if err := fp.flush(); err != nil {
		return fmt.Errorf("tracefile: table %s: %w", m.Table, err)
	}
	return nil
}

// tableFile is an Arrow IPC file (a results table, or any .arrow file
// before its kind is known) opened after [checkFile] passed.
type tableFile struct {
	path   string
	f      *os.File
	r      *ipc.FileReader
	layout fileLayout
}

// openArrowFile checks and opens the Arrow IPC file at path.
func openArrowFile(path string) (*tableFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		err = fmt.Errorf("%w: %s: is a directory, not an Arrow file", ErrBadInput, path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	t := &tableFile{path: path, f: f}
	if t.layout, err = checkFile(f, st.Size()); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: not an Arrow file: %v", ErrCorrupt, path, err)
	}
	err = guard(path, func() (err error) {
		t.r, err = ipc.NewFileReader(f)
		return err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: not an Arrow file (%v)", ErrCorrupt, path, err)
	}
	return t, nil
}

// batch returns record batch i, checked; the caller releases it.
func (t *tableFile) batch(i int) (arrow.RecordBatch, error) {
	var rec arrow.RecordBatch
	err := guard(t.path, func() (err error) {
		rec, err = t.r.RecordBatchAt(i)
		return err
	})
	if err == nil {
		if err = validateBatch(rec); err != nil {
			rec.Release()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: batch %d: %v", ErrCorrupt, t.path, i, err)
	}
	return rec, nil
}

func (t *tableFile) Close() error {
	t.r.Close()
	return t.f.Close()
}

// arrowKind returns the crawltrace kind of an Arrow IPC file.
func arrowKind(path string) (string, error) {
	t, err := openArrowFile(path)
	if err != nil {
		return "", err
	}
	defer t.Close()
	m, err := parseMeta(t.r.Schema().Metadata())
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return m.Kind, nil
}

// inspectTable describes a results table: metadata, schema and first rows.
func inspectTable(w io.Writer, path string, rows int) error {
	// A table is one small batch, read whole to be shown: proved first,
	// so that damaged values are never printed as the table's.
	if _, err := VerifyChecksum(path); err != nil {
		return err
	}
	t, err := openArrowFile(path)
	if err != nil {
		return err
	}
	defer t.Close()
	r := t.r
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
		rec, err := t.batch(i)
		if err != nil {
			return err
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
		rec.Release()
	}
	fmt.Fprintf(w, "  %d rows\n", total)
	return nil
}
