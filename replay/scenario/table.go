package scenario

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

// Table is a results table: named, typed columns and rows of values. Cells
// are int64, float64 (NaN is written as an empty CSV cell and an Arrow null)
// or string. It is not safe for concurrent use.
type Table struct {
	Name    string   // file stem: Name.csv, Name.arrow
	Columns []Column // header
	Rows    [][]any
}

// Column is one column of a [Table].
type Column struct {
	Name string
	Type arrow.DataType // Int64, Float64 or String
}

func intCol(name string) Column   { return Column{name, arrow.PrimitiveTypes.Int64} }
func floatCol(name string) Column { return Column{name, arrow.PrimitiveTypes.Float64} }
func strCol(name string) Column   { return Column{name, arrow.BinaryTypes.String} }

// add appends a row; ints of any width are stored as int64, and nil is a
// value that does not apply (blank in CSV, null in Arrow).
func (t *Table) add(vals ...any) {
	if len(vals) != len(t.Columns) {
		panic(fmt.Sprintf("scenario: table %s: row of %d values for %d columns", t.Name, len(vals), len(t.Columns)))
	}
	row := make([]any, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case int:
			row[i] = int64(x)
		case uint16:
			row[i] = int64(x)
		default:
			row[i] = v
		}
	}
	t.Rows = append(t.Rows, row)
}

func cellString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// WriteCSV writes t with a header line.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Name
	}
	cw.Write(head)
	rec := make([]string, len(t.Columns))
	for _, r := range t.Rows {
		for i, v := range r {
			rec[i] = cellString(v)
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteArrow writes t as the one record batch of an Arrow IPC file whose
// schema metadata is meta, with kind [tracefile.KindScenarioTable] and the
// table's name, so that `crawltrace inspect` opens it.
func (t *Table) WriteArrow(w io.Writer, meta tracefile.TableMeta, mem memory.Allocator) error {
	fields := make([]arrow.Field, len(t.Columns))
	for i, c := range t.Columns {
		nullable := c.Type.ID() == arrow.FLOAT64
		for _, r := range t.Rows {
			nullable = nullable || r[i] == nil
		}
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: nullable}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range t.Rows {
		for i, v := range r {
			if v == nil {
				b.Field(i).AppendNull()
				continue
			}
			switch fb := b.Field(i).(type) {
			case *array.Int64Builder:
				fb.Append(v.(int64))
			case *array.Float64Builder:
				if x := v.(float64); math.IsNaN(x) {
					fb.AppendNull()
				} else {
					fb.Append(x)
				}
			case *array.StringBuilder:
				fb.Append(v.(string))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	meta.Kind, meta.Table = tracefile.KindScenarioTable, t.Name
	if err := tracefile.WriteTable(w, rec, meta, mem); err != nil {
		return fmt.Errorf("scenario: arrow: %w", err)
	}
	return nil
}

// runMeta is the metadata of the tables of one question: the crawl
// directory, its crawl id (from its manifest, when readable) and the
// question's parameters (cfg's fields but the input, output and plots).
func runMeta(input string, cfg any) tracefile.TableMeta {
	m := tracefile.TableMeta{Inputs: []string{input}, Params: map[string]string{}}
	if man, err := tracefile.ReadManifest(input); err == nil {
		m.CrawlID = man.CrawlID
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return m
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return m
	}
	for k, v := range fields {
		switch k {
		case "Input", "OutDir", "Plots", "WriteTraces":
			continue
		}
		val := string(v)
		if uq, err := strconv.Unquote(val); err == nil {
			val = uq
		}
		m.Params[snake(k)] = val
	}
	return m
}

// snake turns a Go field name into a parameter name: FramingBytes ->
// framing_bytes, LRUSizes -> lru_sizes.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// write writes dir/Name.csv and dir/Name.arrow and returns their paths.
func (t *Table) write(dir string, meta tracefile.TableMeta) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	csvPath := filepath.Join(dir, t.Name+".csv")
	arrowPath := filepath.Join(dir, t.Name+".arrow")
	if err := writeFile(csvPath, t.WriteCSV); err != nil {
		return nil, err
	}
	if err := writeFile(arrowPath, func(w io.Writer) error { return t.WriteArrow(w, meta, memory.NewGoAllocator()) }); err != nil {
		return []string{csvPath}, err
	}
	return []string{csvPath, arrowPath}, nil
}

// writeFile writes path through a temporary file renamed into place.
func writeFile(path string, fill func(w io.Writer) error) error {
	return tracefile.WriteFileAtomic(path, fill)
}

// series is one line of a plot.
type series struct {
	name string
	// style names the series's fixed look ([replay.StyleSeries]), a
	// policy or partitioner, when name says more; "" is name.
	style string
	xys   plotter.XYs
}

// axis describes one plot axis.
type axis struct {
	label  string
	log2   bool    // x is log2 of the value; ticks are labelled 2^e
	lo, hi float64 // fixed range when lo < hi
}

// linePlot draws lines into dir/base.png and dir/base.svg and returns the
// paths. The title names the crawl of meta. Series with no points are left
// out; overlapping series stay distinguishable ([replay.StyleLine]).
func linePlot(meta tracefile.TableMeta, dir, base, title string, x, y axis, lines []series) ([]string, error) {
	p := plot.New()
	p.Title.Text = title
	if meta.CrawlID != "" {
		p.Title.Text = fmt.Sprintf("%s, crawl %s", title, meta.CrawlID)
	}
	p.X.Label.Text = x.label
	p.Y.Label.Text = y.label
	if x.log2 {
		p.X.Tick.Marker = replay.Pow2Ticks{}
	}
	p.Y.Tick.Marker = replay.DenseTicks{}
	if y.lo < y.hi {
		// A curve at the top of the range stays clear of the frame.
		p.Y.Min, p.Y.Max = y.lo, y.hi+0.04*(y.hi-y.lo)
	}
	p.Add(plotter.NewGrid())
	for i, s := range lines {
		var xys plotter.XYs
		for _, pt := range s.xys {
			if math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) || math.IsNaN(pt.X) || math.IsInf(pt.X, 0) {
				continue
			}
			xys = append(xys, pt)
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("scenario: plot %s: %w", base, err)
		}
		style := s.style
		if style == "" {
			style = s.name
		}
		replay.StyleSeries(style, i, l, pts)
		p.Add(l, pts)
		name := s.name
		if j := coincides(lines[:i], xys, p.Y.Max-p.Y.Min); j >= 0 {
			name += " (same as " + lines[j].name + ")"
		}
		p.Legend.Add(name, l, pts)
	}
	if !(y.lo < y.hi) {
		// The top and bottom curves stay clear of the frame.
		pad := 0.04 * (p.Y.Max - p.Y.Min)
		p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
	}
	files, err := replay.SavePlot(p, dir, base)
	if err != nil {
		return files, fmt.Errorf("scenario: %w", err)
	}
	return files, nil
}

// coincides is the index of the first of earlier whose points are xys's to
// within a 200th of yRange (a line the new one hides, whatever their
// styles), or -1.
func coincides(earlier []series, xys plotter.XYs, yRange float64) int {
	for j, e := range earlier {
		if len(e.xys) != len(xys) {
			continue
		}
		same := true
		for k, pt := range xys {
			same = same && e.xys[k].X == pt.X && math.Abs(e.xys[k].Y-pt.Y) <= yRange/200
		}
		if same {
			return j
		}
	}
	return -1
}

// ratio is a/b, NaN when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// balance is max/mean of loads (NaN for no load).
func balance(loads []int64) (maxLoad int64, mean, bal float64) {
	var sum int64
	for _, l := range loads {
		sum += l
		maxLoad = max(maxLoad, l)
	}
	if len(loads) == 0 {
		return 0, math.NaN(), math.NaN()
	}
	mean = float64(sum) / float64(len(loads))
	return maxLoad, mean, ratio(float64(maxLoad), mean)
}

// writeTables writes every table's CSV and Arrow files into dir.
func writeTables(dir string, tables []*Table, meta tracefile.TableMeta) ([]string, error) {
	var files []string
	for _, t := range tables {
		f, err := t.write(dir, meta)
		files = append(files, f...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// resultWriter is a scenario's result: it writes its tables, and its
// figures when plots, into dir and returns the paths written.
type resultWriter interface {
	write(dir string, plots bool, meta tracefile.TableMeta) ([]string, error)
}

// figure is one plot of a result, drawn by [linePlot] into dir/base.png
// and dir/base.svg.
type figure struct {
	base, title string
	x, y        axis
	lines       []series
}

// writeResult is the ending every scenario's write shares: it writes the
// result's tables into dir and then, when plots, the figures (built only
// then), and returns every path written, up to the first error.
func writeResult(dir string, meta tracefile.TableMeta, tables []*Table, plots bool, figures func() []figure) ([]string, error) {
	files, err := writeTables(dir, tables, meta)
	if err != nil || !plots {
		return files, err
	}
	for _, fig := range figures() {
		f, err := linePlot(meta, dir, fig.base, fig.title, fig.x, fig.y, fig.lines)
		files = append(files, f...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// cacheSizes sorts and dedupes a question's cache sizes, all of which must
// be at least 1.
func cacheSizes(in []int, question string) ([]int, error) {
	sizes := slices.Clone(in)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	if len(sizes) == 0 || sizes[0] < 1 {
		return nil, fmt.Errorf("%w: scenario: %s needs cache sizes >= 1", tracefile.ErrBadInput, question)
	}
	return sizes, nil
}
