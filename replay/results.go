package replay

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// Row is one (trace, policy, cache size) result.
type Row struct {
	Trace    string // base name of the trace file
	Policy   string // lower-case policy name
	Size     int    // cache size in entries
	Requests int64  // counted requests (after the warmup)
	// Hits and Misses are counts, Hits + Misses = Requests. For randomized
	// policies run over several seeds, Misses is the mean over the seeds
	// rounded to the nearest integer; MissRate keeps the exact mean.
	Hits, Misses int64
	MissRate     float64 // Misses / Requests (the exact mean over seeds)
	// RelativeToMin is MissRate divided by MIN's miss rate on the same trace
	// and size; NaN when MIN was not run or its miss rate is 0.
	RelativeToMin float64
	// Seconds is the wall time of the run that produced the row; for the
	// one-pass policies (lru, min, infinite) it is the whole curve's time.
	Seconds float64
	Seeds   int // runs averaged: the seed count for randomized policies, else 1
	// MissRateStd is the sample standard deviation of the miss rate over
	// the seeds (0 for one run).
	MissRateStd float64
	// SampleRate is the share of keys the row was estimated from (a
	// sampled replay, Config.Sample), or 0 for an exact row. With
	// SampleMaxKeys it is the rate in force at the end of the trace.
	SampleRate float64
}

// Results are the rows of a replay and the files written. It is not safe for
// concurrent use.
type Results struct {
	Rows  []Row
	Files []string // files written, in order
	// Meta is written into results.arrow: the traces, their crawl and the
	// sweep's parameters.
	Meta tracefile.TableMeta
	// Traces holds the metadata of each condensed trace by base name (the
	// Row.Trace), for figure titles; traces of other formats are absent.
	Traces map[string]tracefile.Meta
	// Memory holds what each simulation run at one size measured of its
	// own structures (empty for merged results, one-pass curves and
	// sampled runs, whose caches are miniatures).
	Memory []Measured
	// plotAllSizes is Config.PlotAllSizes.
	plotAllSizes bool
}

// Measured is the memory one simulation's structures took when it ended
// ([policy.Bytes]) and the keys its cache then held.
type Measured struct {
	Trace, Policy string
	Size          int
	Keys          int
	Bytes         int64
}

// resultColumns are the header of results.csv (and the Arrow fields).
var resultColumns = []string{"trace", "policy", "size", "requests", "hits", "misses", "miss_rate", "relative_to_min", "seconds", "seeds", "miss_rate_std", "sample_rate"}

// oldResultColumns is the header before sample_rate, still read.
var oldResultColumns = resultColumns[:11]

// policyRank orders policies as policy.Names does; unknown names sort after.
func policyRank(name string) int {
	if i := slices.Index(policy.Names(), name); i >= 0 {
		return i
	}
	return len(policy.Names())
}

// sortRows orders rows by trace, policy (paper order) and size.
func sortRows(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Trace, b.Trace), cmp.Compare(policyRank(a.Policy), policyRank(b.Policy)),
			cmp.Compare(a.Policy, b.Policy), cmp.Compare(a.Size, b.Size))
	})
}

// setRelative fills RelativeToMin from the "min" rows.
func setRelative(rows []Row) {
	type ts struct {
		trace string
		size  int
	}
	mins := map[ts]float64{}
	for _, r := range rows {
		if r.Policy == "min" {
			mins[ts{r.Trace, r.Size}] = r.MissRate
		}
	}
	for i := range rows {
		m, ok := mins[ts{rows[i].Trace, rows[i].Size}]
		switch {
		case !ok || m == 0 && rows[i].MissRate != 0:
			rows[i].RelativeToMin = math.NaN()
		case m == 0:
			rows[i].RelativeToMin = 1
		default:
			rows[i].RelativeToMin = rows[i].MissRate / m
		}
	}
}

func fmtFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// sampleRateField is the sample_rate of a row: empty for an exact one.
func sampleRateField(r float64) string {
	if r == 0 {
		return ""
	}
	return fmtFloat(r)
}

// WriteCSV writes rows as CSV with a header line.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write(resultColumns)
	for _, r := range rows {
		cw.Write([]string{r.Trace, r.Policy, strconv.Itoa(r.Size), strconv.FormatInt(r.Requests, 10),
			strconv.FormatInt(r.Hits, 10), strconv.FormatInt(r.Misses, 10), fmtFloat(r.MissRate), fmtFloat(r.RelativeToMin),
			strconv.FormatFloat(r.Seconds, 'f', 3, 64), strconv.Itoa(r.Seeds), fmtFloat(r.MissRateStd), sampleRateField(r.SampleRate)})
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads rows written by [WriteCSV]. Errors wrap
// [tracefile.ErrCorrupt] and name the line.
func ReadCSV(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil || !slices.Equal(head, resultColumns) && !slices.Equal(head, oldResultColumns) {
		return nil, corruptf("%s: not a replay results CSV (header %v)", name, head)
	}
	cr.FieldsPerRecord = len(head)
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, corruptf("%s: %v", name, err)
		}
		var r Row
		var errs []error
		num := func(s string) float64 {
			if s == "" {
				return math.NaN()
			}
			v, err := strconv.ParseFloat(s, 64)
			errs = append(errs, err)
			return v
		}
		count := func(s string) int64 {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				// Files written before counts were integers hold means
				// over seeds such as 12.5.
				f, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil {
					errs = append(errs, err)
				}
				v = int64(math.Round(f))
			}
			return v
		}
		r.Trace, r.Policy = rec[0], rec[1]
		r.Size, err = strconv.Atoi(rec[2])
		errs = append(errs, err)
		r.Requests, err = strconv.ParseInt(rec[3], 10, 64)
		errs = append(errs, err)
		r.Hits, r.Misses = count(rec[4]), count(rec[5])
		r.MissRate, r.RelativeToMin, r.Seconds = num(rec[6]), num(rec[7]), num(rec[8])
		r.Seeds, err = strconv.Atoi(rec[9])
		errs = append(errs, err)
		r.MissRateStd = num(rec[10])
		if len(rec) > 11 && rec[11] != "" {
			r.SampleRate = num(rec[11])
		}
		if err := errors.Join(errs...); err != nil {
			return nil, corruptf("%s: line %d: %v", name, line, err)
		}
		rows = append(rows, r)
	}
}

// resultSchema is the Arrow schema of results.arrow.
var resultSchema = arrow.NewSchema([]arrow.Field{
	{Name: "trace", Type: arrow.BinaryTypes.String},
	{Name: "policy", Type: arrow.BinaryTypes.String},
	{Name: "size", Type: arrow.PrimitiveTypes.Int64},
	{Name: "requests", Type: arrow.PrimitiveTypes.Int64},
	{Name: "hits", Type: arrow.PrimitiveTypes.Int64},
	{Name: "misses", Type: arrow.PrimitiveTypes.Int64},
	{Name: "miss_rate", Type: arrow.PrimitiveTypes.Float64},
	{Name: "relative_to_min", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "seconds", Type: arrow.PrimitiveTypes.Float64},
	{Name: "seeds", Type: arrow.PrimitiveTypes.Int64},
	{Name: "miss_rate_std", Type: arrow.PrimitiveTypes.Float64},
	{Name: "sample_rate", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// WriteArrow writes rows as the one record batch of an Arrow IPC file whose
// schema metadata is meta (kind and table name are set here), so that
// `crawltrace inspect` opens it and a reader knows the tool version, the
// traces, their crawl and the sweep's parameters.
func WriteArrow(w io.Writer, rows []Row, meta tracefile.TableMeta, mem memory.Allocator) error {
	b := array.NewRecordBuilder(mem, resultSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.StringBuilder).Append(r.Trace)
		b.Field(1).(*array.StringBuilder).Append(r.Policy)
		b.Field(2).(*array.Int64Builder).Append(int64(r.Size))
		b.Field(3).(*array.Int64Builder).Append(r.Requests)
		b.Field(4).(*array.Int64Builder).Append(r.Hits)
		b.Field(5).(*array.Int64Builder).Append(r.Misses)
		b.Field(6).(*array.Float64Builder).Append(r.MissRate)
		if math.IsNaN(r.RelativeToMin) {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.Float64Builder).Append(r.RelativeToMin)
		}
		b.Field(8).(*array.Float64Builder).Append(r.Seconds)
		b.Field(9).(*array.Int64Builder).Append(int64(r.Seeds))
		b.Field(10).(*array.Float64Builder).Append(r.MissRateStd)
		if r.SampleRate == 0 {
			b.Field(11).AppendNull()
		} else {
			b.Field(11).(*array.Float64Builder).Append(r.SampleRate)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	meta.Kind, meta.Table = tracefile.KindReplayResults, "results"
	if err := tracefile.WriteTable(w, rec, meta, mem); err != nil {
		return fmt.Errorf("replay: arrow: %w", err)
	}
	return nil
}

// WriteMemoryCSV writes, for each policy at each size, the bytes per cached
// entry of a full cache computed from its structures
// ([policy.MemoryPerEntry]) and, where measured holds a simulation of it,
// what that simulation measured: the keys its cache held at the end, the
// bytes its structures took ([policy.Bytes]) and their quotient (the
// largest over the traces). The measured columns are empty for the
// one-pass curves (infinite, and lru, min and static unless run per
// size), for sampled runs and for merged slices.
func WriteMemoryCSV(w io.Writer, policies []string, sizes []int, measured []Measured) error {
	type key struct {
		p string
		s int
	}
	worst := map[key]Measured{}
	for _, m := range measured {
		k := key{m.Policy, m.Size}
		if old, ok := worst[k]; !ok || m.Bytes > old.Bytes {
			worst[k] = m
		}
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"policy", "size", "bytes_per_entry", "keys_held", "bytes", "measured_bytes_per_entry"})
	for _, p := range policies {
		for _, s := range sizes {
			rec := []string{p, strconv.Itoa(s), strconv.FormatFloat(policy.MemoryPerEntry(p, s), 'f', 2, 64), "", "", ""}
			if m, ok := worst[key{p, s}]; ok {
				rec[3], rec[4] = strconv.Itoa(m.Keys), strconv.FormatInt(m.Bytes, 10)
				rec[5] = strconv.FormatFloat(float64(m.Bytes)/float64(max(m.Keys, 1)), 'f', 2, 64)
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeFile writes path through a temporary file renamed into place.
func writeFile(path string, fill func(w io.Writer) error) error {
	return tracefile.WriteFileAtomic(path, fill)
}

// TaskFileName is the results file of task i of n in a sliced run.
func TaskFileName(task, tasks int) string {
	return fmt.Sprintf("results-task-%d-of-%d.csv", task, tasks)
}

var taskFileRE = regexp.MustCompile(`^results-task-(\d+)-of-(\d+)\.csv$`)

// writeOutputs writes the result files of a complete (unsliced or merged)
// run into dir: results.csv, results.arrow, memory.csv and, with plots, the
// figures. The figures are curves over cache size: a run at one size draws
// none (it would pay the rendering, a large share of a short run, for one
// point per policy).
func (res *Results) writeOutputs(dir string, plots bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var policies []string
	var sizes []int
	for _, r := range res.Rows {
		if !slices.Contains(policies, r.Policy) {
			policies = append(policies, r.Policy)
		}
		if !slices.Contains(sizes, r.Size) {
			sizes = append(sizes, r.Size)
		}
	}
	slices.Sort(sizes)
	files := []struct {
		name string
		fill func(io.Writer) error
	}{
		{"results.csv", func(w io.Writer) error { return WriteCSV(w, res.Rows) }},
		{"results.arrow", func(w io.Writer) error { return WriteArrow(w, res.Rows, res.Meta, memory.NewGoAllocator()) }},
		{"memory.csv", func(w io.Writer) error { return WriteMemoryCSV(w, policies, sizes, res.Memory) }},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := writeFile(p, f.fill); err != nil {
			return err
		}
		res.Files = append(res.Files, p)
	}
	if plots && len(sizes) > 1 {
		opts := PlotOptions{AllSizes: res.plotAllSizes, ChargeStatic: res.Meta.Params["charge_static"] == "true"}
		written, err := WritePlots(dir, res.Rows, res.Traces, opts)
		res.Files = append(res.Files, written...)
		if err != nil {
			return err
		}
	}
	return nil
}

// Merge combines the results of a sliced run. Each input is a results CSV
// file or a directory: a directory contributes its results-task-I-of-N.csv
// files, or its results.csv when it has none. All tasks 0..N-1 of every N
// seen must be present, and no (trace, policy, size) may appear twice.
// RelativeToMin is recomputed over the merged rows, and outDir receives
// results.csv, results.arrow, memory.csv and (with plots) the figures. The
// crawl, the traces' metadata and the parameters come from the tasks'
// .json files beside their CSV files (see [Config.Task]); results.arrow
// keeps a parameter only when every task had it with one value. The
// slices of one N-way split must be cut from one run: slices whose .json
// files record other inputs, traces or parameters are refused, naming
// them, and so is a slice without its .json file.
func Merge(inputs []string, outDir string, plots bool) (*Results, error) {
	files, err := expandDirs(inputs, "replay: merge", func(in string) ([]string, error) {
		ents, err := os.ReadDir(in)
		if err != nil {
			return nil, fmt.Errorf("replay: merge: %w", err)
		}
		var found []string
		for _, e := range ents {
			if taskFileRE.MatchString(e.Name()) {
				found = append(found, filepath.Join(in, e.Name()))
			}
		}
		if len(found) == 0 {
			p := filepath.Join(in, "results.csv")
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("%w: replay: merge: %s holds no results-task-*.csv or results.csv", tracefile.ErrBadInput, in)
			}
			found = append(found, p)
		}
		return found, nil
	})
	if err != nil {
		return nil, err
	}
	if err := checkSlices(files); err != nil {
		return nil, err
	}
	seen := map[int]map[int]bool{} // N -> tasks present
	type key struct {
		trace, policy string
		size          int
	}
	origin := map[key]string{}
	res := &Results{}
	for _, f := range files {
		if m := taskFileRE.FindStringSubmatch(filepath.Base(f)); m != nil {
			i, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			if seen[n] == nil {
				seen[n] = map[int]bool{}
			}
			if seen[n][i] {
				return nil, fmt.Errorf("%w: replay: merge: task %d of %d given twice (%s)", tracefile.ErrBadInput, i, n, f)
			}
			seen[n][i] = true
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("%w: replay: merge: %v", tracefile.ErrBadInput, err)
		}
		rows, err := ReadCSV(fh, f)
		fh.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			k := key{r.Trace, r.Policy, r.Size}
			if prev, dup := origin[k]; dup {
				return nil, fmt.Errorf("%w: replay: merge: %s %s size %d is in both %s and %s", tracefile.ErrBadInput, r.Trace, r.Policy, r.Size, prev, f)
			}
			origin[k] = f
		}
		res.Rows = append(res.Rows, rows...)
	}
	for n, got := range seen {
		var missing []string
		for i := range n {
			if !got[i] {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: replay: merge: missing results of task(s) %s of %d", tracefile.ErrBadInput, strings.Join(missing, ","), n)
		}
	}
	sortRows(res.Rows)
	setRelative(res.Rows)
	if err := res.mergeMeta(files); err != nil {
		return nil, err
	}
	if outDir != "" {
		if err := res.writeOutputs(outDir, plots); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Summary writes a table per trace: one line per policy, miss rates in
// percent at up to cols sizes spread over the grid (always the smallest and
// the largest).
func (res *Results) Summary(w io.Writer, cols int) {
	var traces []string
	for _, r := range res.Rows {
		if !slices.Contains(traces, r.Trace) {
			traces = append(traces, r.Trace)
		}
	}
	for _, tr := range traces {
		var sizes []int
		var policies []string
		rate := map[string]map[int]float64{}
		for _, r := range res.Rows {
			if r.Trace != tr {
				continue
			}
			if !slices.Contains(sizes, r.Size) {
				sizes = append(sizes, r.Size)
			}
			if rate[r.Policy] == nil {
				policies = append(policies, r.Policy)
				rate[r.Policy] = map[int]float64{}
			}
			rate[r.Policy][r.Size] = r.MissRate
		}
		slices.Sort(sizes)
		pick := sizes
		if cols >= 2 && len(sizes) > cols {
			pick = nil
			for i := range cols {
				pick = append(pick, sizes[i*(len(sizes)-1)/(cols-1)])
			}
		}
		fmt.Fprintf(w, "%s: miss rate %%\n", tr)
		fmt.Fprintf(w, "  %-14s", "policy")
		for _, s := range pick {
			fmt.Fprintf(w, " %9s", sizeLabel(s))
		}
		fmt.Fprintln(w)
		for _, p := range policies {
			fmt.Fprintf(w, "  %-14s", p)
			for _, s := range pick {
				if v, ok := rate[p][s]; ok {
					fmt.Fprintf(w, " %9.2f", 100*v)
				} else {
					fmt.Fprintf(w, " %9s", "-")
				}
			}
			fmt.Fprintln(w)
		}
	}
}

// sizeLabel prints 1024 as 1K, 1<<20 as 1M.
func sizeLabel(s int) string {
	switch {
	case s >= 1<<30 && s%(1<<30) == 0:
		return strconv.Itoa(s>>30) + "G"
	case s >= 1<<20 && s%(1<<20) == 0:
		return strconv.Itoa(s>>20) + "M"
	case s >= 1<<10 && s%(1<<10) == 0:
		return strconv.Itoa(s>>10) + "K"
	}
	return strconv.Itoa(s)
}

// taskMeta is what a sliced run's CSV file does not hold: written beside
// it as results-task-I-of-N.json, read back by [Merge].
type taskMeta struct {
	CrawlID string                    `json:"crawl_id"`
	Inputs  []string                  `json:"inputs"`
	Params  map[string]string         `json:"params"`
	Traces  map[string]tracefile.Meta `json:"traces"`
}

// taskMetaPath is the metadata file beside a task's results CSV file.
func taskMetaPath(csvPath string) string { return strings.TrimSuffix(csvPath, ".csv") + ".json" }

// readTaskMeta reads the metadata file of the task results CSV file f.
func readTaskMeta(f string) (*taskMeta, error) {
	p := taskMetaPath(f)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("replay: merge: %w", tracefile.InputError(err))
	}
	var m taskMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: replay: merge: %s: %v", tracefile.ErrBadInput, p, err)
	}
	return &m, nil
}

// checkSlices refuses task slices of one N-way split (results-task-I-of-N)
// that were not cut from one run: their metadata files must record the
// same inputs, the same traces (crawl, creation time, subtrace) and the
// same parameters. Slices of different N are different runs and may
// differ.
func checkSlices(files []string) error {
	first := map[int]string{} // N -> the first slice seen
	metas := map[int]*taskMeta{}
	for _, f := range files {
		sm := taskFileRE.FindStringSubmatch(filepath.Base(f))
		if sm == nil {
			continue
		}
		n, _ := strconv.Atoi(sm[2])
		m, err := readTaskMeta(f)
		if err != nil {
			return err
		}
		ref, ok := metas[n]
		if !ok {
			first[n], metas[n] = f, m
			continue
		}
		if why := sliceDiff(ref, m); why != "" {
			return fmt.Errorf("%w: replay: merge: %s and %s are slices of different runs: %s", tracefile.ErrBadInput, first[n], f, why)
		}
	}
	return nil
}

// sliceDiff says how the runs of two task slices differ ("" when they do
// not).
func sliceDiff(a, b *taskMeta) string {
	if !slices.Equal(a.Inputs, b.Inputs) {
		return fmt.Sprintf("inputs %s vs %s", strings.Join(a.Inputs, ","), strings.Join(b.Inputs, ","))
	}
	if a.CrawlID != b.CrawlID {
		return fmt.Sprintf("crawl %q vs %q", a.CrawlID, b.CrawlID)
	}
	var keys []string
	for k := range a.Params {
		keys = append(keys, k)
	}
	for k := range b.Params {
		if _, ok := a.Params[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, oka := a.Params[k]
		vb, okb := b.Params[k]
		if va != vb || oka != okb {
			return fmt.Sprintf("parameter %s %q vs %q", k, va, vb)
		}
	}
	var names []string
	for name := range a.Traces {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ta, tb := a.Traces[name], b.Traces[name]
		if ta.CrawlID != tb.CrawlID || !ta.Created.Equal(tb.Created) || ta.Subtrace != tb.Subtrace {
			return fmt.Sprintf("trace %s is another file (crawl %q created %s vs crawl %q created %s)", name,
				ta.CrawlID, ta.Created.Format(time.RFC3339Nano), tb.CrawlID, tb.Created.Format(time.RFC3339Nano))
		}
	}
	if len(a.Traces) != len(b.Traces) {
		return fmt.Sprintf("%d traces vs %d", len(a.Traces), len(b.Traces))
	}
	return ""
}

// mergeMeta sets the merged results' metadata from the metadata files of
// the task CSV files among files (a results.csv contributes only its name
// to the inputs): the crawls and inputs of all, the traces' metadata, and
// the parameters every task shares.
func (res *Results) mergeMeta(files []string) error {
	var crawls []string
	params, haveParams := map[string]string{}, false
	inputs := []string{}
	res.Traces = map[string]tracefile.Meta{}
	all := true
	for _, f := range files {
		if taskFileRE.MatchString(filepath.Base(f)) {
			m, err := readTaskMeta(f) // checkSlices read it once already
			if err != nil {
				return err
			}
			for _, c := range strings.Split(m.CrawlID, ",") {
				if c != "" && !slices.Contains(crawls, c) {
					crawls = append(crawls, c)
				}
			}
			for _, in := range m.Inputs {
				if !slices.Contains(inputs, in) {
					inputs = append(inputs, in)
				}
			}
			maps.Copy(res.Traces, m.Traces)
			if !haveParams {
				maps.Copy(params, m.Params)
				haveParams = true
			} else {
				maps.DeleteFunc(params, func(k, v string) bool { return m.Params[k] != v })
			}
			continue
		}
		all = false
		if !slices.Contains(inputs, f) {
			inputs = append(inputs, f)
		}
	}
	if !all {
		clear(params)
	}
	params["merged_results"] = strconv.Itoa(len(files))
	res.Meta = tracefile.TableMeta{CrawlID: strings.Join(crawls, ","), Inputs: inputs, Params: params}
	return nil
}
