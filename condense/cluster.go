package condense

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// A sharded run is a map, a shuffle through the shared file system and a
// reduce:
//
//   - map task i of N ([Run] with Shard i, Shards N) reads the i-th of N
//     equal byte ranges of the input (every node's URL log segments laid
//     end to end in node and log order; a segment is split between record
//     batches), once, writes its part of each node's condensed traces to
//     OUT/parts/map-i/, and spills the first occurrences of (fingerprint,
//     node, URL) into OUT/buckets/map-i/, one bucket file per worker in
//     blocks of one fingerprint range each; its part of the report goes to
//     OUT/map-i-of-N.json;
//   - reduce task j of N ([Reduce]) reads the blocks of fingerprint range j
//     from every map task's bucket files and verifies them exactly, writing
//     OUT/report-shard-j-of-N.json;
//   - [Merge] adds the map and reduce reports into report.json, and
//     [MergeTraces] joins each node's parts, in map task order, into its
//     traces: a node's log order.
//
// Every input byte is read once in all, by one map task, whatever the
// number of nodes: a one-node crawl splits as evenly as a many-node one.
// Where a segment is cut by a corrupt batch, the merge and the reduce
// leave out what later map tasks read of it (see [HeadPart]), so that
// the merged report and traces are an unsharded run's on any input.

// BucketDir is the directory of the map tasks' bucket files in a sharded
// run's output directory.
const BucketDir = "buckets"

// MapReportName is the file name of map task i of n's report.
func MapReportName(i, n int) string { return fmt.Sprintf("map-%d-of-%d.json", i, n) }

// MapBucketDir is the directory of map task i's bucket files.
func MapBucketDir(out string, i int) string {
	return filepath.Join(out, BucketDir, fmt.Sprintf("map-%d", i))
}

// PartsDir is the directory of the map tasks' parts of the condensed
// traces in a sharded run's output directory.
const PartsDir = "parts"

// MapPartsDir is the directory of map task i's parts of the traces.
func MapPartsDir(out string, i int) string {
	return filepath.Join(out, PartsDir, fmt.Sprintf("map-%d", i))
}

// mapTask is map task r.cfg.Shard: it reads units and writes buckets for
// all Shards*parts ranges and its parts of the traces.
func (r *run) mapTask(ctx context.Context, units []unit, inBytes int64) (*Report, error) {
	rep := r.newReport()
	rep.Stage = StageMap
	ranges := r.cfg.Shards * r.parts
	// Buckets and trace parts are written under temporary names and renamed
	// when complete, so a retried task never leaves a partial set of them
	// for the reduce.
	final := MapBucketDir(r.cfg.Output, r.cfg.Shard)
	tmp, err := mapTempDir(final, r.cfg.Shard)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	finalParts := MapPartsDir(r.cfg.Output, r.cfg.Shard)
	tmpParts, err := mapTempDir(finalParts, r.cfg.Shard)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpParts)
	r.traceDir = tmpParts
	var nodeReps []NodeReport
	if len(units) > 0 {
		var meta tracefile.Meta
		var read int64
		t0 := time.Now()
		var closed func() error
		nodeReps, meta, read, closed, err = r.mapNodes(ctx, units, ranges, tmp)
		if err != nil {
			return nil, err
		}
		if err := closed(); err != nil {
			return nil, err
		}
		rep.MapSec, rep.SpilledRecords, rep.UnfilteredRows = time.Since(t0).Seconds(), r.spilled.Load(), r.unfiltered.Load()
		rep.CrawlID, rep.Nodes, rep.InputBytesRead = meta.CrawlID, max(meta.Nodes, len(r.nodes)), read
	} else if rep.CrawlID, err = crawlID(r.cfg.Input, r.nodes); err != nil {
		return nil, err
	}
	r.progress("map %d/%d: read %d rows from %d nodes", r.cfg.Shard, r.cfg.Shards, r.rowsIn.Load(), len(nodeReps))
	for _, d := range [][2]string{{tmp, final}, {tmpParts, finalParts}} {
		if err := os.RemoveAll(d[1]); err != nil {
			return nil, fmt.Errorf("condense: %w", err)
		}
		if err := os.Rename(d[0], d[1]); err != nil {
			return nil, fmt.Errorf("condense: %w", err)
		}
	}
	rep.InputBytes = inBytes
	rep.Head = r.head
	r.finishReport(rep, nodeReps, Counts{})
	return rep, nil
}

// mapTempDir makes the temporary directory, beside final, in which map task
// shard writes what it renames to final when complete.
func mapTempDir(final string, shard int) (string, error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", fmt.Errorf("condense: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), fmt.Sprintf(".map-%d-", shard))
	if err != nil {
		return "", fmt.Errorf("condense: %w", err)
	}
	return tmp, nil
}

// HeadPart is, in a map task's report, what the task read of the segment
// its range starts inside of, after record batches an earlier task reads:
// its head part. An unsharded run stops reading a segment at a corrupt
// batch (bad framing, or a body that fails to decode) and reports it cut
// there, but a map task cannot tell whether a batch before its range is
// corrupt without reading it: checking the framing of those batches is
// cheap (the segment reader checks every message's framing when it opens
// the segment, so no task reads batches past bad framing), but a corrupt
// body shows only when it is decoded. So the task reads its head part, and
// the task that reads the corrupt batch reports the segment cut, as an
// unsharded run does; the merge then drops the head parts of a segment
// that an earlier task reported cut ([droppedHeads]): their rows, their
// cut segment, their fingerprints at the start of the task's part of the
// node's traces, and, in the reduce, their spill records, which the task
// wrote to a bucket file of their own (headBucketFile).
//
// A task has at most one head part, its range being one piece of the
// input; a later part of the same segment is another task's head part.
// Dropping whole head parts is exact: every batch of a head part comes
// after every batch of the earlier tasks' parts of its segment.
type HeadPart struct {
	Node int `json:"node"`
	// Segment is the segment's file name in the node's directory.
	Segment   string `json:"segment"`
	Rows      int64  `json:"rows"`
	CrossRows int64  `json:"cross_rows"`
	// Cut: the task reported the segment cut (first among the node's
	// cut segments in its report).
	Cut bool `json:"cut,omitempty"`
}

// droppedHeads reports which of maps (map reports in task order) have a
// head part that the merge drops: one whose segment an earlier task
// reported cut, in a part the merge keeps. A segment is reported cut
// where reading it stops (a corrupt batch), or at its end (no
// end-of-stream marker, fewer rows than the manifest records), and a part
// after the end holds no batch: either way nothing after the cut counts.
func droppedHeads(maps []*Report) []bool {
	type seg struct {
		node int
		name string
	}
	cut := map[seg]bool{}
	drop := make([]bool, len(maps))
	for i, m := range maps {
		h := m.Head
		if h != nil {
			drop[i] = cut[seg{h.Node, h.Segment}]
		}
		for _, nr := range m.PerNode {
			cs := nr.CutSegments
			if drop[i] && h.Cut && nr.Node == h.Node && len(cs) > 0 {
				cs = cs[1:]
			}
			for _, c := range cs {
				cut[seg{c.Node, filepath.Base(c.File)}] = true
			}
		}
	}
	return drop
}

// crawlID reads the crawl id from the first segment of the first node (for
// a map task that owns no node).
func crawlID(input string, nodes []int) (string, error) {
	if len(nodes) == 0 {
		return "", nil
	}
	rd, err := tracefile.OpenNodeURLs(input, nodes[0])
	if err != nil {
		return "", err
	}
	defer rd.Close()
	return rd.Meta().CrawlID, nil
}

// ReduceConfig configures one reduce task of a sharded run.
type ReduceConfig struct {
	// Dir is the map tasks' output directory (OUT of `condense --shard`);
	// the reduce report is written there too.
	Dir string
	// Shard and Shards: this task verifies fingerprint range Shard of Shards.
	Shard, Shards int
	// MemoryBytes, Workers, TempDir, LimitHeap and Progress are as in
	// [Config].
	MemoryBytes int64
	Workers     int
	TempDir     string
	LimitHeap   bool
	Progress    io.Writer
}

// Reduce runs reduce task cfg.Shard of cfg.Shards: it verifies that range
// exactly from the buckets of every map task and writes
// report-shard-i-of-N.json. Every map task must have finished.
func Reduce(ctx context.Context, cfg ReduceConfig) (*Report, error) {
	start := time.Now()
	d := DefaultConfig()
	if cfg.MemoryBytes <= 0 {
		cfg.MemoryBytes = d.MemoryBytes
	}
	if cfg.Workers <= 0 {
		cfg.Workers = d.Workers
	}
	if cfg.Shards < 1 || cfg.Shard < 0 || cfg.Shard >= cfg.Shards {
		return nil, fmt.Errorf("%w: condense reduce: shard %d/%d out of range", tracefile.ErrBadInput, cfg.Shard, cfg.Shards)
	}
	var maps []*Report
	for i := 0; i < cfg.Shards; i++ {
		p := filepath.Join(cfg.Dir, MapReportName(i, cfg.Shards))
		m, err := ReadReport(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: condense reduce: %s: missing (map task %d of %d has not finished)", tracefile.ErrBadInput, p, i, cfg.Shards)
		}
		if err != nil {
			return nil, err
		}
		if m.Stage != StageMap {
			return nil, fmt.Errorf("%w: condense reduce: %s: not a map report", tracefile.ErrBadInput, p)
		}
		if len(maps) > 0 && (m.CrawlID != maps[0].CrawlID || m.Bits != maps[0].Bits || m.Seed != maps[0].Seed || m.Partitions != maps[0].Partitions) {
			return nil, fmt.Errorf("%w: condense reduce: %s is from a different crawl, fingerprint setting or memory budget than %s", tracefile.ErrBadInput, p, MapReportName(0, cfg.Shards))
		}
		maps = append(maps, m)
	}
	first := maps[0]
	hasher, err := fingerprint.New(first.Seed, first.Bits)
	if err != nil {
		return nil, fmt.Errorf("%w: condense reduce: %v", tracefile.ErrBadInput, err)
	}
	// A node's log may be split between several map tasks.
	var nodes []int
	for _, m := range maps {
		for _, nr := range m.PerNode {
			if !slices.Contains(nodes, nr.Node) {
				nodes = append(nodes, nr.Node)
			}
		}
	}
	slices.Sort(nodes)
	if cfg.TempDir == "" {
		cfg.TempDir = cfg.Dir
	}
	tmp, err := privateTempDir(cfg.TempDir, fmt.Sprintf(".reduce-%d-", cfg.Shard))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	defer limitHeap(cfg.LimitHeap, cfg.MemoryBytes)()
	r := &run{cfg: Config{Input: first.Input, Output: cfg.Dir, Bits: first.Bits, Seed: first.Seed, MemoryBytes: cfg.MemoryBytes,
		Workers: cfg.Workers, Shard: cfg.Shard, Shards: cfg.Shards, TempDir: tmp, Progress: cfg.Progress},
		hasher: hasher, parts: first.Partitions, nodes: nodes, written: map[string]bool{}}
	var ranges []int
	for g := cfg.Shard * r.parts; g < (cfg.Shard+1)*r.parts; g++ {
		ranges = append(ranges, g)
	}
	t0 := time.Now()
	chunks, err := readBuckets(filepath.Join(cfg.Dir, BucketDir, "map-*"))
	if err != nil {
		return nil, err
	}
	// The head parts the merge keeps (see HeadPart).
	for i, drop := range droppedHeads(maps) {
		p := filepath.Join(MapBucketDir(cfg.Dir, i), headBucketFile)
		if drop || maps[i].Head == nil {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue // no bucket files (a run without verification)
		}
		refs, err := readBucketIndex(p)
		if err != nil {
			return nil, err
		}
		chunksByRange(p, refs, chunks)
	}
	perNode, total, err := r.verify(ctx, ranges, cfg.Shards*r.parts, chunks)
	if err != nil {
		return nil, err
	}
	rep := r.newReport()
	rep.VerifySec = time.Since(t0).Seconds()
	rep.Stage, rep.CrawlID, rep.Nodes, rep.Input = StageReduce, first.CrawlID, first.Nodes, first.Input
	var nodeReps []NodeReport
	for _, n := range nodes {
		x := NodeReport{Node: n}
		x.setDistinct(perNode[n])
		nodeReps = append(nodeReps, x)
	}
	r.finishReport(rep, nodeReps, total)
	rep.ElapsedSec = time.Since(start).Seconds()
	rep.MemoryBudget = cfg.MemoryBytes
	if err := tracefile.WriteJSON(filepath.Join(cfg.Dir, ReportName(cfg.Shard, cfg.Shards)), rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// MergeTraces joins the map tasks' parts of each node's traces in dir
// (dir/parts/map-i/) into out/node-NNN.full.arrow and node-NNN.cross.arrow,
// in map task order, which is the node's log order, and then removes
// dir/parts. rep is the merged report ([Merge]): its nodes are the ones
// joined, and their Full, Cross and BytesOut are set to the joined files.
// The fingerprints of the head parts [Merge] dropped (see [HeadPart]) are
// left out. A node whose log one map task read whole has its parts
// renamed, not copied.
func MergeTraces(dir, out string, rep *Report) error {
	tasks := slices.Clone(rep.ShardsMerged)
	slices.Sort(tasks)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("condense: %w", err)
	}
	rep.BytesOut = 0
	for i := range rep.PerNode {
		nr := &rep.PerNode[i]
		nr.BytesOut = 0
		for _, sub := range []string{tracefile.SubtraceFull, tracefile.SubtraceCross} {
			name := tracefile.CondensedName(nr.Node, sub)
			var parts []string
			var skip []int64 // fingerprints left out at the start of each part
			for _, t := range tasks {
				p := filepath.Join(MapPartsDir(dir, t), name)
				if _, err := os.Stat(p); err == nil {
					parts = append(parts, p)
					var n int64
					if h, ok := rep.dropped[t]; ok && h.Node == nr.Node {
						n = h.Rows
						if sub == tracefile.SubtraceCross {
							n = h.CrossRows
						}
					}
					skip = append(skip, n)
				}
			}
			if len(parts) == 0 {
				return fmt.Errorf("%w: condense merge: %s: no map task wrote a part of %s", tracefile.ErrBadInput, filepath.Join(dir, PartsDir), name)
			}
			dst := filepath.Join(out, name)
			if err := joinParts(parts, skip, dst); err != nil {
				return err
			}
			if sub == tracefile.SubtraceFull {
				nr.Full = dst
			} else {
				nr.Cross = dst
			}
			if st, err := os.Stat(dst); err == nil {
				nr.BytesOut += st.Size()
			}
		}
		rep.BytesOut += nr.BytesOut
	}
	if err := os.RemoveAll(filepath.Join(dir, PartsDir)); err != nil {
		return fmt.Errorf("condense: %w", err)
	}
	return nil
}

// joinParts writes the condensed traces parts, in order, to dst, leaving
// out the first skip[i] fingerprints of part i.
func joinParts(parts []string, skip []int64, dst string) error {
	if len(parts) == 1 && skip[0] == 0 {
		if err := os.Rename(parts[0], dst); err == nil {
			return nil
		}
	}
	var w *tracefile.CondensedWriter
	for i, p := range parts {
		rd, err := tracefile.OpenCondensed(p)
		if err != nil {
			if w != nil {
				w.Abort()
			}
			return err
		}
		if w == nil {
			m := rd.Meta()
			m.ToolVersion = ""
			if w, err = tracefile.CreateCondensed(dst, m); err != nil {
				rd.Close()
				return err
			}
		}
		left := skip[i]
		for rd.Next() {
			fps := rd.FPs()
			n := min(left, int64(len(fps)))
			left -= n
			if err := w.AppendSlice(fps[n:]); err != nil {
				rd.Close()
				w.Abort()
				return err
			}
		}
		err = rd.Err()
		rd.Close()
		if err == nil && left > 0 {
			err = fmt.Errorf("%w: %s: %d fingerprints short of the part its map report records", tracefile.ErrCorrupt, p, left)
		}
		if err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}
