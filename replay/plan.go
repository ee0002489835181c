package replay

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// plan is a sweep resolved once from its [Config] by newPlan: the
// parameters normalized and checked, this task's units of the grid (trace
// x policy x size, or one unit per one-pass curve), the sampling decision,
// the traces' lengths and the memory the run may take. Run and everything
// below it read the plan, never the Config.
type plan struct {
	traces       []string
	format       string
	policies     []string // lower case, without repeats
	sizes        []int    // ascending, distinct
	seeds        int      // >= 1
	warmup       int64
	chargeStatic bool
	minPerSize   bool
	algorithm    string

	// sample is Config.Sample, sampleMaxKeys Config.SampleMaxKeys;
	// sampled reports that the traces are sampled (a rate in (0, 1), or a
	// bound on the sampled keys), omitSmall Config.SampleOmitSmall.
	sample        float64
	sampleMaxKeys int
	sampled       bool
	omitSmall     bool

	task, tasks  int // tasks >= 1
	workers      int // >= 1
	outDir       string
	plots        bool
	plotAllSizes bool
	progress     io.Writer

	// onePass holds the policies computed for every size in one unit
	// (their units have size 0).
	onePass map[string]bool
	// units are this task's units of the grid, in grid order.
	units []unit
	// lens are the requests of each trace that has units, -1 when unknown
	// before a pass (text) or when it cannot be opened; total is the
	// requests the units' passes read, -1 when one is unknown.
	lens  []int64
	total int64
	// memLimit is the memory the run should stay within, 0 for no limit
	// (see checkMemory).
	memLimit int64
}

// newPlan resolves cfg: it normalizes and checks the parameters (an error
// wrapping [tracefile.ErrBadInput] for bad ones), lists this task's units,
// reads the traces' lengths and checks the sweep's memory (see
// memcheck.go). It reads no trace beyond its header, except to count the
// distinct keys of one whose request count alone makes the estimate too
// large.
func newPlan(ctx context.Context, cfg Config) (*plan, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: replay: "+format, append([]any{tracefile.ErrBadInput}, args...)...)
	}
	p := &plan{
		traces: slices.Clone(cfg.Traces), seeds: cfg.Seeds, warmup: cfg.Warmup,
		chargeStatic: cfg.ChargeStatic, minPerSize: cfg.MINPerSize, algorithm: cfg.Algorithm,
		sample: cfg.Sample, sampleMaxKeys: cfg.SampleMaxKeys, omitSmall: cfg.SampleOmitSmall,
		task: cfg.Task, tasks: cfg.Tasks, workers: cfg.Workers,
		outDir: cfg.OutDir, plots: cfg.Plots, plotAllSizes: cfg.PlotAllSizes, progress: cfg.Progress,
	}
	if len(p.traces) == 0 {
		return nil, bad("no traces")
	}
	f, err := NormalizeFormat(cfg.Format)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", tracefile.ErrBadInput, err)
	}
	p.format = f
	if p.algorithm == "" {
		p.algorithm = AlgorithmAuto
	}
	if !slices.Contains(Algorithms(), p.algorithm) {
		return nil, bad("unknown algorithm %q (known: %s)", p.algorithm, strings.Join(Algorithms(), ", "))
	}
	if len(cfg.Policies) == 0 {
		return nil, bad("no policies")
	}
	for _, name := range cfg.Policies {
		name = strings.ToLower(strings.TrimSpace(name))
		if !slices.Contains(policy.Names(), name) {
			return nil, bad("unknown policy %q (known: %s)", name, strings.Join(policy.Names(), ", "))
		}
		if !slices.Contains(p.policies, name) {
			p.policies = append(p.policies, name)
		}
	}
	if p.sizes, err = CheckSizes(cfg.Sizes); err != nil {
		return nil, err
	}
	if p.seeds < 1 {
		p.seeds = 1
	}
	if p.warmup < 0 {
		return nil, bad("warmup %d < 0", p.warmup)
	}
	if !(p.sample >= 0 && p.sample <= 1) {
		return nil, bad("sample rate %v is not in (0, 1]", p.sample)
	}
	if p.sampleMaxKeys < 0 {
		return nil, bad("sample max keys %d < 0", p.sampleMaxKeys)
	}
	p.sampled = p.sample > 0 && p.sample < 1 || p.sampleMaxKeys > 0
	if p.sampled && p.warmup > 0 {
		return nil, bad("--warmup cannot be combined with sampling (the warmup counts requests of the whole trace)")
	}
	if p.tasks < 1 {
		p.task, p.tasks = 0, 1
	}
	if p.task < 0 || p.task >= p.tasks {
		return nil, bad("task %d of %d out of range", p.task, p.tasks)
	}
	if p.workers < 1 {
		p.workers = runtime.GOMAXPROCS(0)
	}
	names := map[string]string{}
	for _, t := range p.traces {
		b := filepath.Base(t)
		if prev, dup := names[b]; dup {
			return nil, bad("traces %s and %s have the same base name", prev, t)
		}
		names[b] = t
	}

	p.onePass = map[string]bool{}
	for _, name := range p.policies {
		p.onePass[name] = p.computedInOnePass(name)
	}
	for j, u := range p.grid() {
		if j%p.tasks == p.task {
			p.units = append(p.units, u)
		}
	}
	p.lens = make([]int64, len(p.traces))
	for _, u := range p.units {
		if p.lens[u.trace] == 0 {
			p.lens[u.trace] = traceLen(p.traces[u.trace], p.format)
		}
		if p.lens[u.trace] < 0 || p.total < 0 {
			p.total = -1
			continue
		}
		p.total += p.lens[u.trace] * int64(p.passes(u))
	}
	if p.memLimit, err = p.checkMemory(ctx, cfg.Memory); err != nil {
		return nil, err
	}
	return p, nil
}

// computedInOnePass reports whether name is computed for all sizes in one
// pass (see Config.Algorithm).
func (p *plan) computedInOnePass(name string) bool {
	switch name {
	case "infinite":
		return true
	case "lru", "min", "static":
		if name == "min" && p.minPerSize {
			return false
		}
		if name == "lru" && p.sampleMaxKeys > 0 {
			return true // SHARDS, fixed size
		}
		switch p.algorithm {
		case AlgorithmOnePass:
			return true
		case AlgorithmPerSize:
			return false
		}
		return len(p.sizes) >= OnePassFrom
	}
	return false
}

// shards reports whether lru runs SHARDS with a fixed sample size, which
// samples the whole trace itself (see sample.go).
func (p *plan) shards(name string) bool { return name == "lru" && p.sampleMaxKeys > 0 }

// unit is one cell of the run grid.
type unit struct {
	trace  int
	policy string
	size   int // 0 for one-pass units
}

// grid lists every unit of the sweep, in order.
func (p *plan) grid() []unit {
	var us []unit
	for ti := range p.traces {
		for _, name := range p.policies {
			if p.onePass[name] {
				us = append(us, unit{ti, name, 0})
				continue
			}
			for _, s := range p.sizes {
				us = append(us, unit{ti, name, s})
			}
		}
	}
	return us
}

// unitsOf is the plan's units that replay trace ti, in order.
func (p *plan) unitsOf(ti int) []unit {
	var out []unit
	for _, u := range p.units {
		if u.trace == ti {
			out = append(out, u)
		}
	}
	return out
}

// passes is the number of passes over its trace that unit u makes: one per
// seed for a randomized policy run per size, else one.
func (p *plan) passes(u unit) int {
	if u.size > 0 && randomized(u.policy) {
		return p.seeds
	}
	return 1
}

// traceLen is the number of requests of the trace at path, -1 when unknown
// before a pass (text) or when it cannot be opened (the run reports that).
func traceLen(path, format string) int64 {
	src, err := Open(path, format)
	if err != nil {
		return -1
	}
	defer src.Close()
	return src.Len()
}

// tableMeta is the metadata results.arrow carries: the traces and the
// sweep's parameters.
func (p *plan) tableMeta() tracefile.TableMeta {
	return tracefile.TableMeta{
		Inputs: slices.Clone(p.traces),
		Params: map[string]string{
			"format":          p.format,
			"policies":        strings.Join(p.policies, ","),
			"sizes":           sizesParam(p.sizes),
			"seeds":           strconv.Itoa(p.seeds),
			"warmup":          strconv.FormatInt(p.warmup, 10),
			"charge_static":   strconv.FormatBool(p.chargeStatic),
			"min_per_size":    strconv.FormatBool(p.minPerSize),
			"algorithm":       p.algorithm,
			"sample_rate":     strconv.FormatFloat(p.sample, 'g', -1, 64),
			"sample_max_keys": strconv.Itoa(p.sampleMaxKeys),
		},
	}
}

// sizesParam writes a size grid compactly: 1..33554432 (26 sizes) when it
// is the powers of two between its ends, else every size.
func sizesParam(sizes []int) string {
	pow2 := len(sizes) > 2
	for i, s := range sizes {
		if i > 0 && s != 2*sizes[i-1] {
			pow2 = false
		}
	}
	if pow2 {
		return fmt.Sprintf("%d..%d (%d sizes, powers of two)", sizes[0], sizes[len(sizes)-1], len(sizes))
	}
	parts := make([]string, len(sizes))
	for i, s := range sizes {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ",")
}

// traceMetas reads the metadata of each condensed trace (for figure titles)
// and joins their distinct crawl ids. Traces of other formats, or that
// cannot be opened here (Run reports those), are left out.
func (p *plan) traceMetas() (map[string]tracefile.Meta, string) {
	metas := map[string]tracefile.Meta{}
	var crawls []string
	if p.format != FormatCondensed {
		return metas, ""
	}
	for _, path := range p.traces {
		r, err := tracefile.OpenCondensed(path)
		if err != nil {
			continue
		}
		m := r.Meta()
		r.Close()
		metas[filepath.Base(path)] = m
		if m.CrawlID != "" && !slices.Contains(crawls, m.CrawlID) {
			crawls = append(crawls, m.CrawlID)
		}
	}
	return metas, strings.Join(crawls, ",")
}

// open opens the trace at path in the plan's format, sampled by ts when it
// is not nil (from the sample held in memory when ts holds it).
func (p *plan) open(path string, ts *traceSample) (Source, error) {
	if ts != nil && ts.keys != nil {
		return NewSliceSource(ts.keys), nil
	}
	src, err := Open(path, p.format)
	if err != nil || ts == nil || ts.all {
		return src, err
	}
	return &sampledSource{Source: src, ts: ts}, nil
}
