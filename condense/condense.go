package condense

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/crawltrace/crawltrace/fingerprint"
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
	// TempDir is where a private spill directory is made (and removed at
	// the end); default Output.
	TempDir string
	// Progress, when non-nil, receives progress lines.
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

// minPartitionBytes keeps partitions from being uselessly small (a
// variable so tests can force splitting on small inputs).
var minPartitionBytes int64 = 1 << 20

// spillBufBytes is the write buffer of one partition file.
const spillBufBytes = 32 << 10

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
	r := &run{cfg: cfg, hasher: hasher, parts: parts, nodes: nodes, written: map[string]bool{}}
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
	if err := g.Wait(); err != nil {
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

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "condense: "+format+"\n", args...)
	}
}

func (r *run) spillPath(node, part int) string {
	return filepath.Join(r.cfg.TempDir, fmt.Sprintf("p%05d-n%05d.spill", part, node))
}

// recentCache drops exact repeats of recently spilled URLs. It compares full
// strings, so it only ever drops a URL identical to one already spilled. The
// URL bytes live in one flat arena (slots of recentURLMax bytes), so the
// cache allocates nothing per URL; longer URLs are never cached.
type recentCache struct {
	fps   []uint64
	lens  []uint8
	arena []byte
}

const (
	recentBits   = 15
	recentURLMax = 120
)

func newRecentCache() *recentCache {
	return &recentCache{fps: make([]uint64, 1<<recentBits), lens: make([]uint8, 1<<recentBits),
		arena: make([]byte, (1<<recentBits)*recentURLMax)}
}

// seen reports whether u (with fingerprint fp) was the last URL stored in
// its slot, and stores it otherwise.
func (c *recentCache) seen(fp uint64, u string) bool {
	i := (fp ^ fp>>recentBits ^ fp>>(2*recentBits)) & (1<<recentBits - 1)
	slot := c.arena[int(i)*recentURLMax : int(i+1)*recentURLMax]
	if c.fps[i] == fp && c.lens[i] != 0 && int(c.lens[i]) == len(u) && string(slot[:len(u)]) == u {
		return true
	}
	if len(u) == 0 || len(u) > recentURLMax {
		return false
	}
	c.fps[i] = fp
	c.lens[i] = uint8(len(u))
	copy(slot, u)
	return false
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
				if s, err = newSpillWriter(r.spillPath(node, g)); err != nil {
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
		r.rowsIn.Add(int64(n))
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
			nr.CutSegments = append(nr.CutSegments, CutSegment{Node: node, File: filepath.Join(tracefile.NodeDir(r.cfg.Input, node), si.File), RowsRecovered: si.Rows, Reason: si.Error})
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

type spillWriter struct {
	f    *os.File
	w    *bufio.Writer
	path string
}

func newSpillWriter(path string) (*spillWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("condense: spill: %w", err)
	}
	return &spillWriter{f: f, w: bufio.NewWriterSize(f, spillBufBytes), path: path}, nil
}

// write appends one spill record: fp uint64, node uint16, uvarint length,
// URL bytes.
func (s *spillWriter) write(head []byte, u string) error {
	var lb [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lb[:], uint64(len(u)))
	s.w.Write(head)
	s.w.Write(lb[:k])
	if _, err := s.w.WriteString(u); err != nil {
		return fmt.Errorf("condense: spill %s: %w", s.path, err)
	}
	return nil
}

func (s *spillWriter) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	if err != nil {
		return fmt.Errorf("condense: spill %s: %w", s.path, err)
	}
	return nil
}

// verify processes every partition of this shard and adds up the counts.
func (r *run) verify(ctx context.Context) (map[int]*Counts, Counts, error) {
	perNode := map[int]*Counts{}
	for _, n := range r.nodes {
		perNode[n] = &Counts{}
	}
	var total Counts
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.Workers)
	limit := r.cfg.MemoryBytes / int64(r.cfg.Workers) / 3
	if limit < minPartitionBytes {
		limit = minPartitionBytes
	}
	var done atomic.Int64
	for p := 0; p < r.parts; p++ {
		g.Go(func() error {
			var files []string
			for _, n := range r.nodes {
				path := r.spillPath(n, p)
				if _, err := os.Stat(path); err == nil {
					files = append(files, path)
				}
			}
			res := newPartResult()
			if err := r.processFiles(gctx, files, limit, 0, res); err != nil {
				return err
			}
			for _, f := range files {
				os.Remove(f)
			}
			mu.Lock()
			total.add(res.total)
			for n, c := range res.nodes {
				perNode[n].add(*c)
			}
			mu.Unlock()
			if d := done.Add(1); d%64 == 0 || d == int64(r.parts) {
				r.progress("verified %d/%d partitions", d, r.parts)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, Counts{}, err
	}
	return perNode, total, nil
}

type partResult struct {
	total Counts
	nodes map[int]*Counts
}

func newPartResult() *partResult { return &partResult{nodes: map[int]*Counts{}} }

func (p *partResult) node(n int) *Counts {
	c := p.nodes[n]
	if c == nil {
		c = &Counts{}
		p.nodes[n] = c
	}
	return c
}

// maxSplitDepth bounds recursive re-partitioning of oversized partitions.
const maxSplitDepth = 4

// processFiles verifies the records in files (all of one fingerprint range).
// When they exceed limit bytes it splits them by the next 4 bits of the
// fingerprint below the range and recurses.
func (r *run) processFiles(ctx context.Context, files []string, limit int64, depth int, res *partResult) error {
	var size int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		size += st.Size()
	}
	if size == 0 {
		return nil
	}
	if size > limit && depth < maxSplitDepth {
		return r.split(ctx, files, limit, depth, res)
	}
	buf := make([]byte, 0, size)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("condense: %w", err)
		}
		buf = append(buf, b...)
	}
	return countBuffer(buf, res)
}

// shiftFor is how far the fingerprint is shifted to pick a sub-partition at
// a given split depth: below the bits that chose the top-level range.
func (r *run) shiftFor(depth int) uint {
	used := bits.Len(uint(r.cfg.Shards*r.parts-1)) + 4*depth
	s := r.cfg.Bits - used - 4
	if s < 0 {
		s = 0
	}
	return uint(s)
}

func (r *run) split(ctx context.Context, files []string, limit int64, depth int, res *partResult) error {
	shift := r.shiftFor(depth)
	dir, err := os.MkdirTemp(r.cfg.TempDir, "split-")
	if err != nil {
		return fmt.Errorf("condense: %w", err)
	}
	defer os.RemoveAll(dir)
	var subs [16]*spillWriter
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := scanSpill(f, func(fp uint64, node uint16, u []byte) error {
			k := (fp >> shift) & 15
			if subs[k] == nil {
				s, err := newSpillWriter(filepath.Join(dir, fmt.Sprintf("s%02d.spill", k)))
				if err != nil {
					return err
				}
				subs[k] = s
			}
			var head [10]byte
			binary.LittleEndian.PutUint64(head[:8], fp)
			binary.LittleEndian.PutUint16(head[8:], node)
			return subs[k].write(head[:], string(u))
		})
		if err != nil {
			return err
		}
	}
	for _, s := range subs {
		if s != nil {
			if err := s.close(); err != nil {
				return err
			}
			if err := r.processFiles(ctx, []string{s.path}, limit, depth+1, res); err != nil {
				return err
			}
			os.Remove(s.path)
		}
	}
	return nil
}

func scanSpill(path string, fn func(fp uint64, node uint16, u []byte) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("condense: %w", err)
	}
	for off := 0; off < len(b); {
		fp, node, u, next, err := decodeRec(b, off)
		if err != nil {
			return fmt.Errorf("condense: spill %s: %w", path, err)
		}
		if err := fn(fp, node, u); err != nil {
			return err
		}
		off = next
	}
	return nil
}

func decodeRec(b []byte, off int) (fp uint64, node uint16, u []byte, next int, err error) {
	if off+10 > len(b) {
		return 0, 0, nil, 0, errors.New("truncated record")
	}
	fp = binary.LittleEndian.Uint64(b[off:])
	node = binary.LittleEndian.Uint16(b[off+8:])
	n, k := binary.Uvarint(b[off+10:])
	if k <= 0 || off+10+k+int(n) > len(b) {
		return 0, 0, nil, 0, errors.New("truncated record")
	}
	start := off + 10 + k
	return fp, node, b[start : start+int(n)], start + int(n), nil
}

type entry struct {
	fp   uint64
	off  uint32 // offset of the URL bytes in the buffer
	n    uint32 // URL length
	node uint16
}

// countBuffer counts distinct URLs and fingerprints in one loaded partition
// and finds its collisions: sort by fingerprint, then compare the URL
// strings within each group of equal fingerprints.
func countBuffer(buf []byte, res *partResult) error {
	var ents []entry
	for off := 0; off < len(buf); {
		fp, node, u, next, err := decodeRec(buf, off)
		if err != nil {
			return fmt.Errorf("condense: spill: %w", err)
		}
		ents = append(ents, entry{fp: fp, off: uint32(next - len(u)), n: uint32(len(u)), node: node})
		off = next
	}
	slices.SortFunc(ents, func(a, b entry) int { return cmp.Compare(a.fp, b.fp) })
	type distinctURL struct {
		u     []byte
		nodes []uint16
	}
	var group []distinctURL
	var fpNodes []uint16
	has := func(s []uint16, n uint16) bool { return slices.Contains(s, n) }
	for i := 0; i < len(ents); {
		j := i
		group = group[:0]
		fpNodes = fpNodes[:0]
		for ; j < len(ents) && ents[j].fp == ents[i].fp; j++ {
			e := ents[j]
			u := buf[e.off : e.off+e.n]
			if !has(fpNodes, e.node) {
				fpNodes = append(fpNodes, e.node)
			}
			k := slices.IndexFunc(group, func(d distinctURL) bool { return string(d.u) == string(u) })
			if k < 0 {
				group = append(group, distinctURL{u: u, nodes: []uint16{e.node}})
			} else if !has(group[k].nodes, e.node) {
				group[k].nodes = append(group[k].nodes, e.node)
			}
		}
		fp := ents[i].fp
		res.total.DistinctFPs++
		res.total.DistinctURLs += int64(len(group))
		if len(group) > 1 {
			res.total.CollidingFPs++
			for a := 0; a < len(group); a++ {
				for b := a + 1; b < len(group); b++ {
					res.total.addCollision(collision(fp, group[a].u, group[b].u))
				}
			}
		}
		if len(group) == 1 {
			for _, n := range fpNodes {
				c := res.node(int(n))
				c.DistinctFPs++
				c.DistinctURLs++
			}
			i = j
			continue
		}
		for _, n := range fpNodes {
			c := res.node(int(n))
			c.DistinctFPs++
			var mine []int
			for k, d := range group {
				if has(d.nodes, n) {
					mine = append(mine, k)
				}
			}
			c.DistinctURLs += int64(len(mine))
			if len(mine) > 1 {
				c.CollidingFPs++
				for a := 0; a < len(mine); a++ {
					for b := a + 1; b < len(mine); b++ {
						c.addCollision(collision(fp, group[mine[a]].u, group[mine[b]].u))
					}
				}
			}
		}
		i = j
	}
	return nil
}

func collision(fp uint64, a, b []byte) Collision {
	x, y := string(a), string(b)
	if y < x {
		x, y = y, x
	}
	return Collision{FP: fp, FPHex: fmt.Sprintf("%016x", fp), A: x, B: y}
}
