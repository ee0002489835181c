package replay

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// Config describes a replay sweep: every trace through every policy at every
// size. Flags of `crawltrace replay` bind straight into it.
type Config struct {
	// Traces are the trace files. [ExpandTraces] turns a condensed output
	// directory into its *.arrow traces.
	Traces []string
	// Format is the input format of every trace (see [Formats]); "" is
	// condensed.
	Format string
	// Policies are policy names (see policy.Names), lower case.
	Policies []string
	// Sizes are the cache sizes in entries.
	Sizes []int
	// Seeds is the number of runs of each randomized policy (random,
	// random-scatter), with seeds 1..Seeds; rows report the mean and the
	// standard deviation of the miss rate. 0 means 1.
	Seeds int
	// Warmup requests at the start of each trace update the caches but are
	// not counted.
	Warmup int64
	// ChargeStatic makes STATIC count its preloads as misses (the paper
	// does not).
	ChargeStatic bool
	// Task and Tasks select slice Task (0-based) of Tasks of the run grid;
	// Tasks <= 1 runs everything. The grid lists, for each trace and
	// policy, one unit per cache size, except infinite, and lru, min and
	// static when computed in one pass (Algorithm), which compute every
	// size in one unit; unit j belongs to task j mod Tasks.
	// A sliced run writes only OutDir/results-task-<Task>-of-<Tasks>.csv
	// and, beside it, results-task-<Task>-of-<Tasks>.json (the crawl, the
	// traces' metadata and the sweep's parameters, which the CSV does not
	// hold); [Merge] combines the slices.
	Task, Tasks int
	// Workers bounds the simulations run at once; 0 means GOMAXPROCS.
	Workers int
	// OutDir receives the result files; "" writes nothing.
	OutDir string
	// Algorithm chooses how lru, min and static are computed (see
	// [Algorithms]): AlgorithmAuto ("" too) runs them once per size for
	// fewer than [OnePassFrom] sizes and in one pass for all sizes
	// otherwise; AlgorithmOnePass and AlgorithmPerSize force one or the
	// other. One pass is [LRUMarkers], [MINMarkers] and [StaticCurve]; per
	// size is the policy package's LRU (hash table and list), MIN (heap,
	// sharing one next-use array) and Static (which counts and ranks the
	// keys of the trace in memory again for each size), which also run in
	// parallel. All are exact.
	Algorithm string
	// MINPerSize runs MIN once per size whatever Algorithm says. It exists
	// to cross-check and to spread a huge MIN grid over tasks.
	MINPerSize bool
	// Sample, in (0, 1), replays a spatially sampled trace (SHARDS): the
	// keys whose sampling hash falls below Sample x 2^64, each policy at
	// 1 + (size-1) x Sample keys (miniature simulation); rows are
	// estimates for the whole trace and carry the rate (see sample.go). 0
	// (or 1) is exact. Caches of fewer than 1/Sample keys are below the
	// sample's resolution: lru and clock compute those up to 64 keys
	// exactly on the whole trace in the pass that prepares the sample
	// (their memory bounded by the sizes' sum); the other sizes and
	// policies but infinite write no row there (see samplesmall.go).
	Sample float64
	// SampleOmitSmall, with Sample, writes no row below 1/Sample for any
	// policy, and spares the pass the exact LRU and CLOCK caches there.
	SampleOmitSmall bool
	// SampleMaxKeys, when > 0, bounds the sample to that many keys
	// (SHARDS' fixed-size variant), starting from Sample's rate if set.
	SampleMaxKeys int
	// Memory is the memory the sweep may take, in bytes: Run estimates the
	// peak of its simulations and refuses to start one that needs more
	// (see memcheck.go), and sets Go's soft memory limit a quarter above
	// the estimate, within Memory (unless GOMEMLIMIT is set). 0 means what
	// the machine has available now (procmem.Available); a negative value
	// skips the check.
	Memory int64
	// Plots draws the figures into OutDir (unsliced runs of two sizes or
	// more: the figures are curves over cache size).
	Plots bool
	// PlotAllSizes draws every size of Sizes in the figures; without it
	// their x axis stops a doubling past a trace's distinct URL count
	// ([PlotOptions]).
	PlotAllSizes bool
	// Progress, when not nil, receives a progress line rewritten in place
	// (meant for a terminal).
	Progress io.Writer
}

// PaperPolicies are the policies of the paper's simulations.
func PaperPolicies() []string {
	return []string{"infinite", "min", "lru", "clock", "random", "static"}
}

// DefaultConfig returns the paper's sweep: its six policies at sizes 2^0 ..
// 2^25, condensed traces, one seed, plots on.
func DefaultConfig() Config {
	return Config{Format: FormatCondensed, Policies: PaperPolicies(), Sizes: PaperSizes(), Seeds: 1, Plots: true}
}

// The values of Config.Algorithm.
const (
	AlgorithmAuto    = "auto"
	AlgorithmOnePass = "one-pass"
	AlgorithmPerSize = "per-size"
)

// Algorithms lists the values of Config.Algorithm.
func Algorithms() []string { return []string{AlgorithmAuto, AlgorithmOnePass, AlgorithmPerSize} }

// OnePassFrom is the number of sizes from which AlgorithmAuto computes lru,
// min and static in one pass. Below it one run per size of lru or min is
// cheaper: on a 4M-request Zipf trace one LRU run at one size took half
// the time of the one-pass curve, and one MIN run 0.66 of it; from 4 sizes
// (spread over 2^10..2^20) the runs cost more than the pass
// (docs/benchmarks.md, "One pass or one run per size"). static follows the
// same rule, though its one pass (a count and a sort) does less than even
// one run per size (a count, a sort and a replay): below OnePassFrom sizes
// the runs measure memory.csv's bytes per entry as the others' do.
const OnePassFrom = 4

// randomized reports whether name depends on a seed.
func randomized(name string) bool { return strings.HasPrefix(name, "random") }

// ExpandTraces replaces each directory in args by the *.arrow files in it
// (a condensed output directory), sorted; files are kept as they are.
func ExpandTraces(args []string) ([]string, error) {
	return expandDirs(args, "replay", func(a string) ([]string, error) {
		m, err := filepath.Glob(filepath.Join(a, "*.arrow"))
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		if len(m) == 0 {
			if rawCrawlDir(a) {
				return nil, fmt.Errorf("%w: replay: %s is a raw crawl directory: condense it first (crawltrace condense %s -o OUT_DIR) and replay OUT_DIR", tracefile.ErrBadInput, a, a)
			}
			return nil, fmt.Errorf("%w: replay: %s holds no *.arrow traces", tracefile.ErrBadInput, a)
		}
		slices.Sort(m)
		return m, nil
	})
}

// offlineData is a trace held in memory for MIN and STATIC, loaded once.
type offlineData struct {
	sample *traceSample // how the trace is sampled, nil for exact runs
	once   sync.Once
	keys   []uint64
	next   []int64  // for min run per size
	next32 []uint32 // for min in one pass
	err    error
}

// Run runs cfg's sweep (or its slice) and writes the result files. Each
// trace is processed in turn, its units in parallel. In one pass (see
// Config.Algorithm) lru streams the trace once through [LRUMarkers] for
// every size, static once through [StaticCurve], and min runs
// [MINMarkers] on the trace in memory; per size, they run as the other
// policies do. The online policies stream the trace once per size.
// min, and static run per size, need the whole trace in memory (8 bytes
// per request, plus 4 per request for MIN's next-use times in one pass, 8
// per size), loaded once per trace and dropped when the trace is done. Before the first run,
// Run estimates the sweep's peak memory and refuses to start one that
// needs more than Config.Memory (see memcheck.go).
func Run(ctx context.Context, cfg Config) (*Results, error) {
	p, err := newPlan(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer limitMemory(p.memLimit)()
	return p.run(ctx)
}

// run runs the plan's units and writes the result files.
func (p *plan) run(ctx context.Context) (*Results, error) {
	prog := newProgress(p.progress, len(p.units), p.total)
	res := &Results{Meta: p.tableMeta()}
	res.Traces, res.Meta.CrawlID = p.traceMetas()
	var mu sync.Mutex
	for ti, path := range p.traces {
		units := p.unitsOf(ti)
		if len(units) == 0 {
			continue
		}
		// Long one-pass units first, so they overlap the short ones.
		slices.SortStableFunc(units, func(a, b unit) int {
			if p.onePass[a.policy] != p.onePass[b.policy] {
				if p.onePass[a.policy] {
					return -1
				}
				return 1
			}
			return 0
		})
		off := &offlineData{}
		if p.sampled {
			ts, err := p.prepareSample(ctx, path)
			if err != nil {
				prog.finish()
				return nil, err
			}
			off.sample = ts
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(p.workers)
		for _, u := range units {
			if gctx.Err() != nil {
				break // canceled, or a unit failed: start no more
			}
			g.Go(func() error {
				start := time.Now()
				var mem Measured
				tick := prog.unit(p.lens[u.trace], p.passes(u))
				rows, err := p.runUnit(gctx, path, u, off, &mem, tick)
				if err != nil {
					return err
				}
				if off.sample != nil && !p.shards(u.policy) {
					rows = off.sample.finish(path, u.policy, u.size, rows)
				}
				secs := time.Since(start).Seconds()
				for i := range rows {
					rows[i].Seconds = secs
				}
				mu.Lock()
				res.Rows = append(res.Rows, rows...)
				if mem.Policy != "" && off.sample == nil { // not miniatures
					res.Memory = append(res.Memory, mem)
				}
				mu.Unlock()
				tick.done()
				return nil
			})
		}
		err := g.Wait()
		if err == nil {
			err = ctx.Err() // canceled before some unit started
		}
		if err != nil {
			prog.finish()
			return nil, err
		}
	}
	prog.finish()
	sortRows(res.Rows)
	setRelative(res.Rows)
	if p.outDir == "" {
		return res, nil
	}
	if p.tasks > 1 {
		if err := os.MkdirAll(p.outDir, 0o755); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		f := filepath.Join(p.outDir, TaskFileName(p.task, p.tasks))
		if err := writeFile(f, func(w io.Writer) error { return WriteCSV(w, res.Rows) }); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, f)
		mp := taskMetaPath(f)
		if err := tracefile.WriteJSON(mp, taskMeta{CrawlID: res.Meta.CrawlID, Inputs: res.Meta.Inputs, Params: res.Meta.Params, Traces: res.Traces}); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, mp)
		return res, nil
	}
	res.plotAllSizes = p.plotAllSizes
	return res, res.writeOutputs(p.outDir, p.plots)
}

// load reads the trace into memory for the offline policies; withNext
// (the same for every call on one trace: whether min runs) adds MIN's
// next-use times: 32-bit ones when min runs in one pass (see [MINMarkers]),
// in next32, else 64-bit ones for the policy package's MIN, in next. Both
// passes stop when ctx is done (the run is over: the error it leaves is
// the run's).
func (o *offlineData) load(ctx context.Context, p *plan, path string, withNext bool) ([]uint64, []int64, error) {
	o.once.Do(func() {
		if o.sample != nil {
			o.keys, o.err = o.readSample(ctx, p, path)
		} else {
			o.keys, o.err = readFileCtx(ctx, path, p.format)
		}
		switch {
		case o.err != nil || !withNext:
		case p.onePass["min"]:
			o.next32, o.err = policy.NextUse32Cancel(o.keys, ctx.Done())
		default:
			o.next, o.err = policy.NextUseCancel(o.keys, ctx.Done())
		}
	})
	return o.keys, o.next, o.err
}

// readSample reads the sampled keys of the trace, in one pass that holds
// only them.
func (o *offlineData) readSample(ctx context.Context, p *plan, path string) ([]uint64, error) {
	src, err := p.open(path, o.sample)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var out []uint64
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, src.Keys()...)
	}
	return slices.Clip(out), src.Err()
}

// runUnit runs one unit of the grid and returns its rows; a unit simulated
// at one size also fills mem (Measured.Policy stays "" otherwise).
func (p *plan) runUnit(ctx context.Context, path string, u unit, off *offlineData, mem *Measured, tick *unitTicker) ([]Row, error) {
	name := filepath.Base(path)
	ts := off.sample
	// The sizes simulated: the miniature ones of a sampled run.
	var sizes []int
	for _, s := range p.sizes {
		sizes = append(sizes, ts.scale(s))
	}
	sizes = slices.Compact(sizes)
	curveRows := func(c Curve) []Row {
		rows := make([]Row, len(p.sizes))
		for i, s := range p.sizes {
			j, _ := slices.BinarySearch(c.Sizes, ts.scale(s))
			rows[i] = Row{Trace: name, Policy: u.policy, Size: s, Requests: c.Requests,
				Hits: c.Hits[j], Misses: c.Misses(j), MissRate: c.MissRate(j), Seeds: 1}
		}
		return rows
	}
	// streamCurve reads the trace (or its sample) once through the
	// one-pass curve c.
	streamCurve := func(c interface {
		AccessBatch(keys []uint64)
		Curve() Curve
	}) ([]Row, error) {
		src, err := p.open(path, ts)
		if err != nil {
			return nil, err
		}
		defer src.Close()
		if err := stream(ctx, src, tick, c.AccessBatch); err != nil {
			return nil, err
		}
		return curveRows(c.Curve()), nil
	}
	needNext := slices.Contains(p.policies, "min")
	if u.size > 0 && ts != nil && ts.small.has(u.size) {
		// Below the sample's resolution: the exact row, if any, comes
		// from the pass that prepared the sample (see samplesmall.go).
		return nil, nil
	}
	switch u.policy {
	case "lru":
		if u.size > 0 {
			break
		}
		if p.shards(u.policy) {
			// SHARDS samples the whole trace itself, lowering its rate.
			src, err := Open(path, p.format)
			if err != nil {
				return nil, err
			}
			defer src.Close()
			sh, err := newShardsLRU(p.sizes, p.sampleMaxKeys, p.sample)
			if err != nil {
				return nil, err
			}
			err = stream(ctx, src, tick, func(keys []uint64) {
				for _, k := range keys {
					sh.access(k)
				}
			})
			if err != nil {
				return nil, err
			}
			return sh.rows(name), nil
		}
		// One pass for every size: LRU with markers at the sizes.
		s, err := NewLRUMarkers(sizes, p.warmup)
		if err != nil {
			return nil, err
		}
		return streamCurve(s)
	case "min":
		if u.size > 0 {
			break
		}
		keys, _, err := off.load(ctx, p, path, needNext)
		if err != nil {
			return nil, err
		}
		c, err := minMarkers(ctx.Done(), keys, off.next32, sizes, p.warmup, func(t int) { tick.at(int64(t), int64(len(keys))) })
		if err != nil {
			return nil, err
		}
		return curveRows(c), nil
	case "static":
		if u.size > 0 {
			break
		}
		// One count and one sort for every size, streamed: the trace
		// stays on disk (or in the sample held in memory).
		s, err := NewStaticCurve(sizes, p.warmup, p.chargeStatic)
		if err != nil {
			return nil, err
		}
		return streamCurve(s)
	case "infinite":
		hits, reqs, err := p.simulate(ctx, path, "infinite", 1, policy.Options{}, ts, nil, tick)
		if err != nil {
			return nil, err
		}
		rows := make([]Row, len(p.sizes))
		for i, s := range p.sizes {
			rows[i] = fixedRow(name, u.policy, s, reqs, []int64{hits})
		}
		return rows, nil
	}
	opts := policy.Options{ChargeStaticLoads: p.chargeStatic}
	if u.policy == "static" || u.policy == "min" {
		keys, next, err := off.load(ctx, p, path, needNext)
		if err != nil {
			return nil, err
		}
		opts.Trace, opts.NextUse = keys, next
	}
	seeds := 1
	if randomized(u.policy) {
		seeds = p.seeds
	}
	var reqs int64
	hits := make([]int64, seeds)
	*mem = Measured{Trace: name, Policy: u.policy, Size: u.size}
	for s := range seeds {
		opts.Seed = uint64(s + 1)
		h, n, err := p.simulate(ctx, path, u.policy, ts.scale(u.size), opts, ts, mem, tick)
		if err != nil {
			return nil, err
		}
		tick.nextPass()
		hits[s], reqs = h, n
	}
	return []Row{fixedRow(name, u.policy, u.size, reqs, hits)}, nil
}

// fixedRow summarizes runs of one policy and size: mean and sample standard
// deviation over the per-seed hit counts.
func fixedRow(trace, pol string, size int, reqs int64, hits []int64) Row {
	r := Row{Trace: trace, Policy: pol, Size: size, Requests: reqs, Seeds: len(hits)}
	var sum float64
	for _, h := range hits {
		sum += float64(h)
	}
	meanMisses := float64(reqs) - sum/float64(len(hits))
	r.Misses = int64(math.Round(meanMisses))
	r.Hits = reqs - r.Misses
	if reqs > 0 {
		r.MissRate = meanMisses / float64(reqs)
		if len(hits) > 1 {
			var ss float64
			for _, h := range hits {
				d := float64(reqs-h)/float64(reqs) - r.MissRate
				ss += d * d
			}
			r.MissRateStd = math.Sqrt(ss / float64(len(hits)-1))
		}
	}
	return r
}

// simulate runs one policy at one size over the trace (from memory when
// opts.Trace is set, else streaming from the file) and returns the counted
// hits and requests.
// ts, when not nil, samples the streamed trace (opts.Trace is sampled
// already). mem, when not nil, receives the memory the policy's structures took at
// the end and the keys it then held. tick, when not nil, follows the pass.
func (p *plan) simulate(ctx context.Context, path, name string, size int, opts policy.Options, ts *traceSample, mem *Measured, tick *unitTicker) (hits, reqs int64, err error) {
	opts.Cancel = ctx.Done()
	pol, err := policy.New(name, size, opts)
	if err != nil {
		return 0, 0, fmt.Errorf("replay: %s: %w", filepath.Base(path), err)
	}
	if mem != nil {
		defer func() { mem.Keys, mem.Bytes = pol.Len(), int64(policy.Bytes(pol)) }()
	}
	var t int64
	batch, _ := pol.(policy.Batcher)
	feed := func(keys []uint64) {
		if batch != nil && t >= p.warmup {
			hits += int64(batch.AccessBatch(keys))
			t += int64(len(keys))
			return
		}
		for _, k := range keys {
			if pol.Access(k) && t >= p.warmup {
				hits++
			}
			t++
		}
	}
	if opts.Trace != nil {
		for i := 0; i < len(opts.Trace); i += batchSize {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
			end := min(i+batchSize, len(opts.Trace))
			feed(opts.Trace[i:end])
			tick.at(int64(end), int64(len(opts.Trace)))
		}
	} else {
		src, err := p.open(path, ts)
		if err != nil {
			return 0, 0, err
		}
		defer src.Close()
		if err := stream(ctx, src, tick, feed); err != nil {
			return 0, 0, err
		}
	}
	return hits, max(t-p.warmup, 0), nil
}
