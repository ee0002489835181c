package condense

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

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
	// MemoryBytes bounds the memory of the verification (partition loads and
	// buffers). Default 1 GiB.
	MemoryBytes int64
	// Workers is the parallelism; default GOMAXPROCS.
	Workers int
	// Shard and Shards select fingerprint range Shard of Shards (and the
	// nodes n with n mod Shards = Shard). Shards <= 1 means unsharded.
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
	// near the budget. It changes process-wide state: the CLI sets it, a
	// library caller decides.
	LimitHeap bool
	// Progress, when non-nil, receives stage lines and the progress of
	// reading (rows of the manifest's count) and of verifying (partitions);
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

// heapAllowance is what LimitHeap allows beyond the budget: readers'
// buffers, condensed-trace batches and recent-URL caches.
const heapAllowance = 48 << 20

// minPartitionBytes keeps partitions from being uselessly small (a
// variable so tests can force splitting on small inputs).
var minPartitionBytes int64 = 1 << 20

// spillBufBytes bounds the write buffer of one partition file; with many
// partitions the buffers shrink so that all of them stay within an eighth
// of the memory budget (but not below 4 KiB).
const spillBufBytes = 32 << 10

// spillBuf is the write buffer size for parts partitions written by
// workers nodes at once within budget bytes.
func spillBuf(budget int64, parts, workers int) int {
	b := budget / 8 / int64(max(parts*workers, 1))
	return int(min(max(b, 4<<10), spillBufBytes))
}

// Run condenses cfg.Input into cfg.Output and returns the report (also
// written to report.json, or the shard's partial report name).
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
	// Size the partitioning from the input size: each occurrence costs
	// about its row bytes in a spill file, and one partition must fit a
	// worker's share of the budget with room for its index.
	var inBytes int64
	for _, n := range nodes {
		segs, err := tracefile.ListSegments(tracefile.NodeDir(cfg.Input, n), tracefile.PrefixURLs)
		if err != nil {
			return nil, err
		}
		if len(segs) == 0 {
			return nil, fmt.Errorf("%w: %s: no URL log segments", tracefile.ErrBadInput, tracefile.NodeDir(cfg.Input, n))
		}
		for _, s := range segs {
			if st, err := os.Stat(s); err == nil {
				inBytes += st.Size()
			}
		}
	}
	share := cfg.MemoryBytes / int64(cfg.Workers) / 3
	if share < minPartitionBytes {
		share = minPartitionBytes
	}
	parts := 1
	for int64(parts)*share < inBytes/int64(cfg.Shards) && parts < 4096 {
		parts *= 2
	}
	if cfg.NoVerify {
		parts = 0
	}
	if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	if parts > 0 {
		// A private directory inside TempDir: only it is removed at the end.
		if err := os.MkdirAll(cfg.TempDir, 0o755); err != nil {
			return nil, fmt.Errorf("condense: %w", err)
		}
		dir, err := os.MkdirTemp(cfg.TempDir, fmt.Sprintf(".spill-%d-", cfg.Shard))
		if err != nil {
			return nil, fmt.Errorf("condense: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.TempDir = dir
	}
	if cfg.LimitHeap {
		old := debug.SetMemoryLimit(cfg.MemoryBytes + heapAllowance)
		defer debug.SetMemoryLimit(old)
	}
	r := &run{cfg: cfg, hasher: hasher, parts: parts, nodes: nodes, written: map[string]bool{}}
	r.reading = progress.New(cfg.Progress, "condense: reading", "rows", manifestRows(cfg.Input))
	rep, err := r.do(ctx)
	if err != nil {
		r.cleanup()
		return nil, err
	}
	rep.ElapsedSec = time.Since(start).Seconds()
	rep.MemoryBudget = cfg.MemoryBytes
	if err := tracefile.WriteJSON(filepath.Join(cfg.Output, ReportName(cfg.Shard, cfg.Shards)), rep); err != nil {
		r.cleanup()
		return nil, err
	}
	if cfg.FailOnCollision && rep.Total.CollisionPairs > 0 {
		return rep, fmt.Errorf("%w: %d colliding pairs among %d distinct URLs", ErrCollision, rep.Total.CollisionPairs, rep.Total.DistinctURLs)
	}
	return rep, nil
}

type run struct {
	cfg     Config
	hasher  fingerprint.Hasher
	parts   int // partitions of this shard's range (0: no verification)
	nodes   []int
	mu      sync.Mutex
	written map[string]bool
	rowsIn  atomic.Int64
	// reading reports rowsIn against the manifest's row count.
	reading *progress.Reporter
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

// rangeOf returns the global partition index of fp among shards*parts
// contiguous fingerprint ranges. Fingerprints narrower than 64 bits are
// scaled to the full range first.
func (r *run) rangeOf(fp uint64) int {
	hi, _ := bits.Mul64(fp<<(64-uint(r.cfg.Bits)), uint64(r.cfg.Shards*r.parts))
	return int(hi)
}

func (r *run) do(ctx context.Context) (*Report, error) {
	rep := &Report{Format: "crawltrace-condense-report", Input: r.cfg.Input, Nodes: len(r.nodes), Bits: r.cfg.Bits,
		Seed: r.cfg.Seed, Shard: r.cfg.Shard, Shards: r.cfg.Shards, Partitions: r.parts}
	nodeReps := make([]NodeReport, len(r.nodes))
	var metaOnce sync.Once
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.Workers)
	for i, n := range r.nodes {
		g.Go(func() error {
			nr, meta, err := r.pass1(gctx, n)
			if err != nil {
				return err
			}
			metaOnce.Do(func() { rep.CrawlID = meta.CrawlID; rep.Nodes = max(meta.Nodes, len(r.nodes)) })
			nodeReps[i] = nr
			return nil
		})
	}
	err := g.Wait()
	r.reading.Finish()
	if err != nil {
		return nil, err
	}
	r.progress("read %d rows from %d nodes", r.rowsIn.Load(), len(r.nodes))
	var total Counts
	if r.parts > 0 {
		perNode, tot, err := r.verify(ctx)
		if err != nil {
			return nil, err
		}
		total = tot
		for i := range nodeReps {
			c := perNode[nodeReps[i].Node]
			nodeReps[i].DistinctURLs = c.DistinctURLs
			nodeReps[i].DistinctFPs = c.DistinctFPs
			nodeReps[i].CollidingFPs = c.CollidingFPs
			nodeReps[i].CollisionPairs = c.CollisionPairs
			nodeReps[i].Collisions = c.Collisions
			nodeReps[i].CollisionsTruncated = c.CollisionsTruncated
		}
	}
	for i := range nodeReps {
		nodeReps[i].finish(r.cfg.Bits)
		total.Rows += nodeReps[i].Rows
		total.CrossRows += nodeReps[i].CrossRows
		rep.BytesIn += nodeReps[i].BytesIn
		rep.BytesOut += nodeReps[i].BytesOut
		rep.CutSegments = append(rep.CutSegments, nodeReps[i].CutSegments...)
	}
	if r.rowsIn.Load() == 0 {
		return nil, fmt.Errorf("%w: %s: empty crawl (no URL rows in any node)", tracefile.ErrBadInput, r.cfg.Input)
	}
	total.finish(r.cfg.Bits)
	rep.Total = total
	rep.PerNode = nodeReps
	return rep, nil
}

// manifestRows is the number of URL rows in the crawl in dir (every shard
// reads them all) from its manifest; 0 when there is none (a crawl cut
// short).
func manifestRows(dir string) int64 {
	m, err := tracefile.ReadManifest(dir)
	if err != nil {
		return 0
	}
	return m.URLRows()
}

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "condense: "+format+"\n", args...)
	}
}

func (r *run) spillPath(node, part int) string {
	return filepath.Join(r.cfg.TempDir, fmt.Sprintf("p%05d-n%05d.spill", part, node))
}

// pass1 streams one node's URL log: writes its condensed traces (if this
// shard owns the node) and spills (fp, node, url) of this shard's range.
func (r *run) pass1(ctx context.Context, node int) (NodeReport, tracefile.Meta, error) {
	nr := NodeReport{Node: node}
	rd, err := tracefile.OpenNodeURLs(r.cfg.Input, node)
	if err != nil {
		return nr, tracefile.Meta{}, err
	}
	defer rd.Close()
	meta := rd.Meta()
	writeTraces := node%r.cfg.Shards == r.cfg.Shard
	var full, cross *tracefile.CondensedWriter
	if writeTraces {
		m := meta
		m.Node, m.Created, m.ToolVersion = node, time.Now(), ""
		m.Subtrace = tracefile.SubtraceFull
		nr.Full = filepath.Join(r.cfg.Output, tracefile.CondensedName(node, tracefile.SubtraceFull))
		if full, err = tracefile.CreateCondensed(nr.Full, m); err != nil {
			return nr, meta, err
		}
		defer full.Abort()
		m.Subtrace = tracefile.SubtraceCross
		nr.Cross = filepath.Join(r.cfg.Output, tracefile.CondensedName(node, tracefile.SubtraceCross))
		if cross, err = tracefile.CreateCondensed(nr.Cross, m); err != nil {
			return nr, meta, err
		}
		defer cross.Abort()
	}
	// Spill files for this shard's partitions.
	var spills []*spillWriter
	if r.parts > 0 {
		spills = make([]*spillWriter, r.parts)
		defer func() {
			for _, s := range spills {
				if s != nil {
					s.f.Close()
				}
			}
		}()
	}
	recent := newRecentCache()
	lo := r.cfg.Shard * r.parts
	var rows, crossRows int64
	var rec [10]byte
	for rd.Next() {
		if err := ctx.Err(); err != nil {
			return nr, meta, err
		}
		b := rd.Batch()
		n := b.Len()
		for i := 0; i < n; i++ {
			u := b.URL.Value(i)
			fp := r.hasher.String(u)
			if writeTraces {
				if err := full.Append(fp); err != nil {
					return nr, meta, err
				}
				if int(b.Dest.Value(i)) != node {
					crossRows++
					if err := cross.Append(fp); err != nil {
						return nr, meta, err
					}
				}
			}
			if r.parts == 0 {
				continue
			}
			g := r.rangeOf(fp) - lo
			if g < 0 || g >= r.parts || recent.seen(fp, u) {
				continue
			}
			s := spills[g]
			if s == nil {
				if s, err = newSpillWriter(r.spillPath(node, g), spillBuf(r.cfg.MemoryBytes, r.parts, r.cfg.Workers)); err != nil {
					return nr, meta, err
				}
				spills[g] = s
			}
			binary.LittleEndian.PutUint64(rec[:8], fp)
			binary.LittleEndian.PutUint16(rec[8:], uint16(node))
			if err := s.write(rec[:], u); err != nil {
				return nr, meta, err
			}
		}
		rows += int64(n)
		r.reading.Set(r.rowsIn.Add(int64(n)))
	}
	if err := rd.Err(); err != nil {
		return nr, meta, err
	}
	for _, s := range spills {
		if s != nil {
			if err := s.close(); err != nil {
				return nr, meta, err
			}
		}
	}
	for _, si := range rd.Segments() {
		nr.BytesIn += si.Bytes
		if !si.Clean {
			file := filepath.Join(tracefile.NodeDir(r.cfg.Input, node), si.File)
			if r.cfg.Strict {
				return nr, meta, fmt.Errorf("%w: %s: cut segment (%d rows recovered): %s", tracefile.ErrCorrupt, file, si.Rows, si.Error)
			}
			nr.CutSegments = append(nr.CutSegments, CutSegment{Node: node, File: file, RowsRecovered: si.Rows, Reason: si.Error})
		}
	}
	if writeTraces {
		nr.Rows, nr.CrossRows = rows, crossRows
		for _, w := range []*tracefile.CondensedWriter{full, cross} {
			if err := w.Close(); err != nil {
				return nr, meta, err
			}
		}
		r.mu.Lock()
		r.written[nr.Full], r.written[nr.Cross] = true, true
		r.mu.Unlock()
		for _, p := range []string{nr.Full, nr.Cross} {
			if st, err := os.Stat(p); err == nil {
				nr.BytesOut += st.Size()
			}
		}
	}
	return nr, meta, nil
}
