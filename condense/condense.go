package condense

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/progress"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// ErrCollision is returned by [Run] when FailOnCollision is set and the
// fingerprints merged distinct URLs.
var ErrCollision = errors.New("condense: fingerprint collision")

// Config configures a condense run. Fields map one to one onto the flags
// of `crawltrace condense`.
type Config struct {
	// Input is the raw crawl directory (node-NNN/urls-*.arrows).
	Input string
	// Output is the directory for condensed traces and the report.
	Output string
	// Bits truncates fingerprints to this width (1..64); default 64. Below 64
	// collisions become likely: it exists to test the collision check.
	Bits int
	// Seed is the fingerprint hash seed; default 0 (the trace format's).
	Seed uint64
	// MemoryBytes bounds the memory of the collision check: the map side's
	// repeat filter (a quarter), bucket buffers (an eighth) and, in an
	// unsharded run, spill blocks kept in memory instead of written to the
	// bucket files (three eighths of the budget beyond its first 64 MiB),
	// the reduce side's loaded ranges (a third per worker). Default 1 GiB.
	MemoryBytes int64
	// Workers is the parallelism; default GOMAXPROCS.
	Workers int
	// Shard and Shards make Run map task Shard of Shards of a cluster run:
	// it reads the Shard-th of Shards equal byte ranges of the input (see
	// [Reduce], [Merge] and [MergeTraces]). Shards <= 1 means unsharded.
	Shard, Shards int
	// FailOnCollision makes Run return ErrCollision when any are found.
	FailOnCollision bool
	// NoVerify skips the collision check and only writes the traces.
	NoVerify bool
	// Strict turns every cut segment (no end-of-stream marker, cut inside
	// its schema, 0 bytes, or fewer rows than manifest.json records) into
	// an error wrapping tracefile.ErrCorrupt; by default cut segments are
	// read as far as they go and listed in the report.
	Strict bool
	// TempDir is where a private spill directory is made (and removed at
	// the end); default Output.
	TempDir string
	// LimitHeap makes Run set the Go runtime's soft memory limit to
	// MemoryBytes plus a fixed allowance for buffers while it runs (and
	// restore it after), so the garbage collector keeps the whole process
	// near the budget, and return the map side's memory to the operating
	// system before verification (debug.FreeOSMemory). It changes
	// process-wide state: the CLI sets it, a library caller decides.
	LimitHeap bool
	// Progress, when non-nil, receives stage lines and the progress of
	// reading (rows of the manifest's count) and of verifying (ranges);
	// a *progress.Sink picks live or batch lines.
	Progress io.Writer
}

// DefaultConfig returns the defaults documented on [Config].
func DefaultConfig() Config {
	return Config{Bits: 64, MemoryBytes: 1 << 30, Workers: runtime.GOMAXPROCS(0), Shards: 1}
}

func (c *Config) fill() error {
	d := DefaultConfig()
	if c.Bits == 0 {
		c.Bits = d.Bits
	}
	if c.MemoryBytes <= 0 {
		c.MemoryBytes = d.MemoryBytes
	}
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.Shards <= 0 {
		c.Shards = 1
	}
	if c.Shard < 0 || c.Shard >= c.Shards {
		return fmt.Errorf("%w: condense: shard %d out of range 0..%d", tracefile.ErrBadInput, c.Shard, c.Shards-1)
	}
	if c.Output == "" {
		return fmt.Errorf("%w: condense: no output directory", tracefile.ErrBadInput)
	}
	if c.TempDir == "" {
		c.TempDir = c.Output
	}
	return nil
}

// privateTempDir makes dir and a new directory inside it named after
// prefix, for the caller to remove.
func privateTempDir(dir, prefix string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("condense: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return "", fmt.Errorf("condense: %w", err)
	}
	return tmp, nil
}

// limitHeap sets the Go runtime's soft memory limit to budget plus
// heapAllowance when on, and returns what restores the previous limit.
func limitHeap(on bool, budget int64) func() {
	if !on {
		return func() {}
	}
	old := debug.SetMemoryLimit(budget + heapAllowance)
	return func() { debug.SetMemoryLimit(old) }
}

// heapAllowance is what LimitHeap allows beyond the budget: readers'
// buffers and condensed-trace batches.
const heapAllowance = 24 << 20

// keptShare is the part of the memory budget beyond keepFloor that an
// unsharded run's spill blocks may take in memory: blocks within it are
// never written to a file and read back (on this virtual machine, writing
// fresh page-cache pages and reading them again was most of a spill's
// cost). It adds to the map side's repeat filter (a quarter) and block
// buffers (an eighth); at the reduce, each range's kept blocks are freed
// once it is verified, and the loaded ranges are small (maxRangeBytes).
const keptShare = 3.0 / 8

// keepFloor is the part of a budget that keeps no blocks (a variable for
// tests): a budget this small is chosen to bound memory, and at 64 MiB a
// run keeps the peak RSS it had before blocks were kept (the target of at
// most 24 bytes per distinct URL of docs/benchmarks.md is measured there).
var keepFloor int64 = 64 << 20

// keepFor is the bytes of spill blocks an unsharded run with this budget
// keeps in memory.
func keepFor(budget int64) int64 {
	return int64(float64(max(budget-keepFloor, 0)) * keptShare)
}

// aggShare is the part of the memory budget beyond keepFloor that an
// unsharded run's map workers may fill with their aggTables, counting in
// memory; a run whose distinct URLs do not fit spills them and goes on
// with the spill and reduce.
const aggShare = 5.0 / 8

// minAggBytes is the smallest aggTable worth making, per worker.
const minAggBytes = 16 << 20

// testAggLimit, when set by a test, replaces the aggTable's limit
// (negative: no table, the run spills from the start).
var testAggLimit int64

// aggFor is the memory of each of workers aggTables with this budget, or
// 0 when they would be too small to try.
func aggFor(budget int64, workers int) int64 {
	n := int64(float64(max(budget-keepFloor, 0)) * aggShare / float64(max(workers, 1)))
	if n < minAggBytes {
		return 0
	}
	return n
}

// testAfterMap, when set by a test, sees an unsharded run's spill blocks
// kept in memory and written to files before they are verified.
var testAfterMap func(kept, written rangeChunks)

// maxRangeBytes caps the spill bytes a fingerprint range is sized for,
// whatever the budget, so that a range's sort and compares work in cache:
// at the default 1 GiB budget, ranges of a sixth of it (170 MB of spill,
// a million records) made the reduce's sort a third of a run's CPU on a
// 4M-distinct trace. 2, 4 and 8 MiB measured alike; 64 MiB and more
// slower.
const maxRangeBytes = 4 << 20

// minPartitionBytes keeps partitions from being uselessly small (a
// variable so tests can force splitting on small inputs).
var minPartitionBytes int64 = 1 << 20

// spillBufBytes bounds the block size of a bucket file (the records of one
// range a worker gathers before writing them); with many ranges the blocks
// shrink so that all of them stay within an eighth of the memory budget
// (but not below 4 KiB).
const spillBufBytes = 64 << 10

// spillBuf is the block size for parts ranges gathered by workers workers
// at once within budget bytes.
func spillBuf(budget int64, parts, workers int) int {
	b := budget / 8 / int64(max(parts*workers, 1))
	return int(min(max(b, 4<<10), spillBufBytes))
}

// spillShare is the part of the input's bytes assumed to reach the buckets
// when sizing the fingerprint ranges (first occurrences of about 70 bytes
// for rows of about 100; fewer with repeats).
const spillShare = 0.7

// rangesFor is the number of fingerprint ranges per shard: enough that one
// range of the buckets fits a reduce worker's share of the budget, and
// holds at most about maxRangeBytes. It
// depends only on the input size, the budget and the shard count, so every
// map task of a sharded run computes the same.
func rangesFor(inBytes, budget int64, shards int) int {
	share := max(min(budget/6, maxRangeBytes), minPartitionBytes)
	parts := 1
	for float64(parts)*float64(share) < spillShare*float64(inBytes)/float64(shards) && parts < 4096 {
		parts *= 2
	}
	return parts
}

// inputSize is the total size of the URL log segments of nodes.
func inputSize(input string, nodes []int) (int64, error) {
	var inBytes int64
	for _, n := range nodes {
		segs, err := tracefile.ListSegments(tracefile.NodeDir(input, n), tracefile.PrefixURLs)
		if err != nil {
			return 0, err
		}
		if len(segs) == 0 {
			return 0, fmt.Errorf("%w: %s: no URL log segments", tracefile.ErrBadInput, tracefile.NodeDir(input, n))
		}
		for _, s := range segs {
			if st, err := os.Stat(s); err == nil {
				inBytes += st.Size()
			}
		}
	}
	return inBytes, nil
}

// Run condenses cfg.Input into cfg.Output and returns the report (also
// written to report.json).
//
// Unsharded (Shards <= 1) it does everything: the map side reads every
// segment once, in parallel, writing the condensed traces and spilling the
// first occurrences of URLs by fingerprint range to a private directory;
// the reduce side then verifies each range exactly.
//
// With Shards = N it is map task Shard of a cluster run: it reads only the
// Shard-th of N equal byte ranges of the input (the segments of all nodes
// laid end to end; a segment is split between record batches), writes its
// part of each node's traces to Output/parts/map-i/, and leaves its
// buckets in Output/buckets/map-i/ and its part of the report in
// map-i-of-N.json; [Reduce] then verifies each range, [Merge] writes
// report.json and [MergeTraces] joins the parts into the traces.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	hasher, err := fingerprint.New(cfg.Seed, cfg.Bits)
	if err != nil {
		return nil, err
	}
	nodes, err := tracefile.CrawlNodes(cfg.Input)
	if err != nil {
		return nil, err
	}
	// A manifest is proved before anything is read by it.
	man, err := tracefile.ReadManifest(cfg.Input)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	inBytes, err := inputSize(cfg.Input, nodes)
	if err != nil {
		return nil, err
	}
	sharded := cfg.Shards > 1
	parts := rangesFor(inBytes, cfg.MemoryBytes, cfg.Shards)
	if cfg.NoVerify {
		parts = 0
	}
	segs, err := crawlSegments(cfg.Input, nodes)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	// A private directory inside TempDir for chunk and (unsharded) spill
	// files: only it is removed at the end.
	tmp, err := privateTempDir(cfg.TempDir, fmt.Sprintf(".spill-%d-", cfg.Shard))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cfg.TempDir = tmp
	defer limitHeap(cfg.LimitHeap, cfg.MemoryBytes)()
	r := &run{cfg: cfg, hasher: hasher, parts: parts, nodes: nodes, written: map[string]bool{}, traceDir: cfg.Output, kept: rangeChunks{}}
	if !sharded {
		// A map task's buckets are read by other processes: only an
		// unsharded run counts in memory, or keeps blocks there.
		r.aggLimit = aggFor(cfg.MemoryBytes, cfg.Workers)
		if testAggLimit < 0 {
			r.aggLimit = 0
		}
		if r.aggLimit == 0 || !aggUsable(nodes) {
			r.aggLimit = 0
			r.keepBytes = keepFor(cfg.MemoryBytes)
		}
	}
	var total int64 // a map task reads only its nodes: total unknown
	if !sharded {
		total = manifestRows(man)
	}
	r.reading = progress.New(cfg.Progress, "condense: reading", "rows", total)
	// The in-memory table is sized ahead for a crawl-like trace: one
	// distinct URL in sixteen rows (the rows from the manifest, or from
	// the input's size at about 100 bytes a row).
	r.totalRows = inBytes / 100
	if total > 0 {
		r.totalRows = total
	}
	r.expectURLs = r.totalRows / 16
	var rep *Report
	if sharded {
		rep, err = r.mapTask(ctx, shardUnits(segs, cfg.Shard, cfg.Shards), inBytes)
	} else {
		rep, err = r.do(ctx, wholeUnits(segs))
	}
	if err != nil {
		r.cleanup()
		return nil, err
	}
	rep.ElapsedSec = time.Since(start).Seconds()
	rep.MemoryBudget = cfg.MemoryBytes
	name := ReportName(0, 1)
	if sharded {
		name = MapReportName(cfg.Shard, cfg.Shards)
	}
	if err := tracefile.WriteJSON(filepath.Join(cfg.Output, name), rep); err != nil {
		r.cleanup()
		return nil, err
	}
	if cfg.FailOnCollision && rep.Total.CollisionPairs > 0 {
		return rep, fmt.Errorf("%w: %d colliding pairs among %d distinct URLs", ErrCollision, rep.Total.CollisionPairs, rep.Total.DistinctURLs)
	}
	return rep, nil
}

type run struct {
	cfg    Config
	hasher fingerprint.Hasher
	parts  int // partitions of this shard's range (0: no verification)
	nodes  []int
	// traceDir is where the condensed traces are written: Output, or a
	// map task's parts directory.
	traceDir string
	mu       sync.Mutex
	written  map[string]bool
	rowsIn   atomic.Int64
	spilled  atomic.Int64 // records written to buckets
	// unfiltered counts the rows spilled with the filter bypassed.
	unfiltered atomic.Int64
	// totalRanges is the number of fingerprint ranges the buckets were
	// split into (over all shards), for splitting a range further.
	totalRanges int
	// reading reports rowsIn against the manifest's row count.
	reading *progress.Reporter
	// keepBytes is how many bytes of spill blocks an unsharded run keeps
	// in memory rather than in its bucket files; kept holds them by range
	// once the map side is done (guarded by mu while it runs).
	keepBytes int64
	kept      rangeChunks
	// aggLimit is the memory of the map side's aggTable per worker (0:
	// the run spills from the start); agg is the table when it held every
	// URL to the end, so that nothing was spilled.
	aggLimit   int64
	agg        *aggTable
	expectURLs int64 // distinct URLs the table is sized for at first
	totalRows  int64 // the rows of the input (the manifest's, or estimated)
	// head is what a map task's head unit read (see HeadPart).
	head *HeadPart
}

// cleanup removes the outputs of a failed run, so nothing half-written looks
// complete.
func (r *run) cleanup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.written {
		os.Remove(p)
	}
}

// rangeOf returns the index of fp among ranges contiguous fingerprint
// ranges. Fingerprints narrower than 64 bits are scaled to the full range
// first.
func (r *run) rangeOf(fp uint64, ranges int) int {
	hi, _ := bits.Mul64(fp<<(64-uint(r.cfg.Bits)), uint64(ranges))
	return int(hi)
}

// do is an unsharded run: map every node into r.parts ranges, then verify
// every range.
func (r *run) do(ctx context.Context, units []unit) (*Report, error) {
	rep := r.newReport()
	bucketDir := filepath.Join(r.cfg.TempDir, "buckets")
	if err := os.MkdirAll(bucketDir, 0o755); err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	t0 := time.Now()
	nodeReps, meta, read, closed, err := r.mapNodes(ctx, units, r.parts, bucketDir)
	if err != nil {
		return nil, err
	}
	closedDone := false
	defer func() {
		if !closedDone {
			closed() // an error path: wait for the closes; Run removes the outputs
		}
	}()
	rep.MapSec, rep.SpilledRecords, rep.UnfilteredRows = time.Since(t0).Seconds(), r.spilled.Load(), r.unfiltered.Load()
	t0 = time.Now()
	rep.CrawlID, rep.Nodes, rep.InputBytesRead = meta.CrawlID, max(meta.Nodes, len(r.nodes)), read
	unfiltered := ""
	if n := r.unfiltered.Load(); n > 0 {
		unfiltered = fmt.Sprintf(" (%d rows unfiltered: the repeat filter dropped too few)", n)
	}
	if r.agg != nil {
		r.progress("read %d rows from %d nodes, counted their URLs in memory", r.rowsIn.Load(), len(r.nodes))
	} else {
		r.progress("read %d rows from %d nodes, spilled %d first occurrences%s", r.rowsIn.Load(), len(r.nodes), r.spilled.Load(), unfiltered)
	}
	if r.rowsIn.Load() == 0 {
		return nil, fmt.Errorf("%w: %s: empty crawl (no URL rows in any node)", tracefile.ErrBadInput, r.cfg.Input)
	}
	var total Counts
	if r.agg != nil {
		perNode, tot := r.countAggs()
		total = tot
		for i := range nodeReps {
			nodeReps[i].setDistinct(perNode[nodeReps[i].Node])
		}
		rep.VerifySec = time.Since(t0).Seconds()
		rep.InMemory = true
	} else if r.parts > 0 {
		ranges := make([]int, r.parts)
		for i := range ranges {
			ranges[i] = i
		}
		if r.cfg.LimitHeap {
			// The map side's filters and buffers are garbage now; give
			// their pages back before verification allocates its own,
			// or the process holds both (measured: peak RSS 96-100 MB
			// without, 86-90 MB with, on a 4M-distinct trace at
			// --memory 64MiB; the collection takes milliseconds).
			debug.FreeOSMemory()
		}
		chunks, err := readBuckets(bucketDir)
		if err != nil {
			return nil, err
		}
		if testAfterMap != nil {
			testAfterMap(r.kept, chunks)
		}
		chunks.add(r.kept)
		r.kept = nil
		perNode, tot, err := r.verify(ctx, ranges, r.parts, chunks)
		if err != nil {
			return nil, err
		}
		total = tot
		for i := range nodeReps {
			nodeReps[i].setDistinct(perNode[nodeReps[i].Node])
		}
		rep.VerifySec = time.Since(t0).Seconds()
	}
	closedDone = true
	if err := closed(); err != nil {
		return nil, err
	}
	r.finishReport(rep, nodeReps, total)
	return rep, nil
}

func (r *run) newReport() *Report {
	return &Report{Format: reportFormat, Input: r.cfg.Input, Nodes: len(r.nodes), Bits: r.cfg.Bits,
		Seed: r.cfg.Seed, Shard: r.cfg.Shard, Shards: r.cfg.Shards, Partitions: r.parts}
}

func (r *run) finishReport(rep *Report, nodeReps []NodeReport, total Counts) {
	for i := range nodeReps {
		nodeReps[i].finish(r.cfg.Bits)
		total.Rows += nodeReps[i].Rows
		total.CrossRows += nodeReps[i].CrossRows
		rep.BytesIn += nodeReps[i].BytesIn
		rep.BytesOut += nodeReps[i].BytesOut
		rep.CutSegments = append(rep.CutSegments, nodeReps[i].CutSegments...)
	}
	total.finish(r.cfg.Bits)
	rep.Total = total
	rep.PerNode = nodeReps
}

func (n *NodeReport) setDistinct(c *Counts) {
	if c == nil {
		return
	}
	n.DistinctURLs = c.DistinctURLs
	n.DistinctFPs = c.DistinctFPs
	n.CollidingFPs = c.CollidingFPs
	n.CollisionPairs = c.CollisionPairs
	n.Collisions = c.Collisions
	n.CollisionsTruncated = c.CollisionsTruncated
}

// manifestRows is the number of URL rows in the crawl from its manifest
// m; 0 when there is none (a crawl cut short).
func manifestRows(m *tracefile.Manifest) int64 {
	if m == nil {
		return 0
	}
	return m.URLRows()
}

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "condense: "+format+"\n", args...)
	}
}
