package condense

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/crawltrace/crawltrace/fingerprint"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Collision is one pair of distinct URLs with the same fingerprint.
type Collision struct {
	FP    uint64 `json:"fp"`
	FPHex string `json:"fp_hex"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// CutSegment is a segment that did not end cleanly (the writer was
// killed, or a copy was truncated); scenario reads crawls with the same
// checks.
type CutSegment = tracefile.CutSegment

// Counts are the verification counts of a node or of the whole crawl.
type Counts struct {
	Rows                int64       `json:"rows"`
	CrossRows           int64       `json:"cross_rows"`
	DistinctURLs        int64       `json:"distinct_urls"`
	DistinctFPs         int64       `json:"distinct_fingerprints"`
	CollidingFPs        int64       `json:"colliding_fingerprints"`
	CollisionPairs      int64       `json:"collision_pairs"`
	ExpectedCollisions  float64     `json:"expected_collisions"`
	Collisions          []Collision `json:"collisions,omitempty"`
	CollisionsTruncated bool        `json:"collisions_truncated,omitempty"`
}

// NodeReport is a node's part of the report.
type NodeReport struct {
	Node int `json:"node"`
	Counts
	Full        string       `json:"full,omitempty"`
	Cross       string       `json:"cross,omitempty"`
	BytesIn     int64        `json:"bytes_in"`
	BytesOut    int64        `json:"bytes_out"`
	CutSegments []CutSegment `json:"cut_segments,omitempty"`
}

// Report is what condense found, written as report.json.
type Report struct {
	Format       string `json:"format"`
	CrawlID      string `json:"crawl_id"`
	Input        string `json:"input"`
	Nodes        int    `json:"nodes"`
	Bits         int    `json:"fingerprint_bits"`
	Seed         uint64 `json:"fingerprint_seed"`
	Stage        string `json:"stage,omitempty"` // "map" or "reduce" in a sharded run
	Shard        int    `json:"shard"`
	Shards       int    `json:"shards"`
	ShardsMerged []int  `json:"shards_merged,omitempty"`
	Partitions   int    `json:"partitions"`
	MemoryBudget int64  `json:"memory_budget"`
	Total        Counts `json:"total"`
	BytesIn      int64  `json:"bytes_in"`
	BytesOut     int64  `json:"bytes_out"`
	// InputBytes is the size of the whole raw trace (map reports).
	InputBytes int64 `json:"input_bytes,omitempty"`
	// InputBytesRead is what the map side read of the input: every byte its
	// segment readers read or mapped, framing checks included (so a little
	// more than BytesIn).
	InputBytesRead int64   `json:"input_bytes_read"`
	ElapsedSec     float64 `json:"elapsed_seconds"`
	// MapSec and VerifySec split the elapsed time (summed over the tasks
	// in a merged report): reading, hashing and
	// spilling; and the exact check of the spilled records. SpilledRecords
	// is what the map side wrote to the buckets: the first occurrences of
	// each URL on each node, plus repeats the bounded filter had forgotten,
	// plus the UnfilteredRows: rows spilled without a look at the filter,
	// because it was dropping too few of them to pay (see filterGate), or
	// with none (after the recent-URL table found few repeats, see
	// mapper.spillFromNow).
	MapSec         float64 `json:"map_seconds,omitempty"`
	VerifySec      float64 `json:"verify_seconds,omitempty"`
	SpilledRecords int64   `json:"spilled_records,omitempty"`
	UnfilteredRows int64   `json:"unfiltered_rows,omitempty"`
	// InMemory says that the distinct URLs fit the map workers' memory
	// and were counted there, with nothing spilled (see aggTable).
	InMemory    bool         `json:"in_memory,omitempty"`
	PerNode     []NodeReport `json:"per_node"`
	CutSegments []CutSegment `json:"cut_segments,omitempty"`
	// Head is a map report's head part (see [HeadPart]), if the task's
	// range starts inside a segment.
	Head *HeadPart `json:"head,omitempty"`
	// dropped are, in a merged report, the head parts [Merge] dropped, by
	// map task, for [MergeTraces] (not part of report.json).
	dropped map[int]HeadPart
}

// Stages of a sharded run's reports.
const (
	StageMap    = "map"
	StageReduce = "reduce"
)

const reportFormat = "crawltrace-condense-report"

// MaxListedCollisions caps the pairs listed by name in a report (all are
// counted).
const MaxListedCollisions = 10000

// ReportName is the report's file name for a shard (or the whole run when
// shards <= 1).
func ReportName(shard, shards int) string {
	if shards <= 1 {
		return "report.json"
	}
	return fmt.Sprintf("report-shard-%d-of-%d.json", shard, shards)
}

// ReadReport reads a report.json.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil || r.Format != reportFormat {
		return nil, fmt.Errorf("%w: %s: not a condense report", tracefile.ErrBadInput, path)
	}
	return &r, nil
}

func (c *Counts) addCollision(col Collision) {
	c.CollisionPairs++
	if len(c.Collisions) < MaxListedCollisions {
		c.Collisions = append(c.Collisions, col)
	} else {
		c.CollisionsTruncated = true
	}
}

func (c *Counts) add(o Counts) {
	c.DistinctURLs += o.DistinctURLs
	c.DistinctFPs += o.DistinctFPs
	c.CollidingFPs += o.CollidingFPs
	c.CollisionPairs += o.CollisionPairs
	c.CollisionsTruncated = c.CollisionsTruncated || o.CollisionsTruncated
	for _, col := range o.Collisions {
		if len(c.Collisions) < MaxListedCollisions {
			c.Collisions = append(c.Collisions, col)
		} else {
			c.CollisionsTruncated = true
		}
	}
}

func (c *Counts) finish(bits int) {
	sort.Slice(c.Collisions, func(i, j int) bool {
		a, b := c.Collisions[i], c.Collisions[j]
		if a.FP != b.FP {
			return a.FP < b.FP
		}
		if a.A != b.A {
			return a.A < b.A
		}
		return a.B < b.B
	})
	c.ExpectedCollisions = fingerprint.ExpectedCollisions(float64(c.DistinctURLs), bits)
}

// Merge combines the reports of a sharded run, the N map reports and the
// N reduce reports, into the report an unsharded run would have written
// (a node read by several map tasks adds up). [MergeTraces] then joins the
// traces.
// Every task 0..N-1 of both stages must be present exactly once.
func Merge(parts []*Report) (*Report, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: condense merge: no partial reports", tracefile.ErrBadInput)
	}
	n := parts[0].Shards
	seen := map[string]map[int]bool{StageMap: {}, StageReduce: {}}
	var maps, reduces []*Report
	for _, p := range parts {
		if p.Shards != n || p.Shards < 1 {
			return nil, fmt.Errorf("%w: condense merge: reports from runs with different shard counts (%d and %d)", tracefile.ErrBadInput, n, p.Shards)
		}
		if p.CrawlID != parts[0].CrawlID || p.Bits != parts[0].Bits || p.Seed != parts[0].Seed || p.Nodes != parts[0].Nodes {
			return nil, fmt.Errorf("%w: condense merge: %s %d is from a different crawl or fingerprint setting", tracefile.ErrBadInput, p.Stage, p.Shard)
		}
		s, ok := seen[p.Stage]
		if !ok {
			return nil, fmt.Errorf("%w: condense merge: shard %d: not a map or reduce report of a sharded run", tracefile.ErrBadInput, p.Shard)
		}
		if s[p.Shard] {
			return nil, fmt.Errorf("%w: condense merge: %s task %d given twice", tracefile.ErrBadInput, p.Stage, p.Shard)
		}
		s[p.Shard] = true
		if p.Stage == StageMap {
			maps = append(maps, p)
		} else {
			reduces = append(reduces, p)
		}
	}
	for _, stage := range []string{StageMap, StageReduce} {
		for i := 0; i < n; i++ {
			if !seen[stage][i] {
				return nil, fmt.Errorf("%w: condense merge: %s task %d of %d is missing", tracefile.ErrBadInput, stage, i, n)
			}
		}
	}
	sort.Slice(maps, func(i, j int) bool { return maps[i].Shard < maps[j].Shard })
	sort.Slice(reduces, func(i, j int) bool { return reduces[i].Shard < reduces[j].Shard })
	first := maps[0]
	out := &Report{Format: first.Format, CrawlID: first.CrawlID, Input: first.Input, Nodes: first.Nodes, Bits: first.Bits,
		Seed: first.Seed, Shards: 1, MemoryBudget: first.MemoryBudget}
	byNode := map[int]*NodeReport{}
	var order []int
	drop := droppedHeads(maps)
	for k, p := range maps {
		out.ShardsMerged = append(out.ShardsMerged, p.Shard)
		out.ElapsedSec += p.ElapsedSec
		out.MapSec += p.MapSec
		out.SpilledRecords += p.SpilledRecords
		out.UnfilteredRows += p.UnfilteredRows
		if p.InputBytesRead >= 0 && out.InputBytesRead >= 0 {
			out.InputBytesRead += p.InputBytesRead
		} else {
			out.InputBytesRead = -1
		}
		for _, nr := range p.PerNode {
			if h := p.Head; drop[k] && nr.Node == h.Node {
				// What the task read after the segment's cut: not read
				// unsharded.
				nr.Rows -= h.Rows
				nr.CrossRows -= h.CrossRows
				if h.Cut && len(nr.CutSegments) > 0 {
					nr.CutSegments = nr.CutSegments[1:]
				}
				if out.dropped == nil {
					out.dropped = map[int]HeadPart{}
				}
				out.dropped[p.Shard] = *h
			}
			if m, ok := byNode[nr.Node]; ok {
				// The node's log continues in this map task's range: its
				// parts add up, in task order (the log's).
				m.Rows += nr.Rows
				m.CrossRows += nr.CrossRows
				m.BytesIn += nr.BytesIn
				m.BytesOut += nr.BytesOut
				m.CutSegments = append(m.CutSegments, nr.CutSegments...)
				continue
			}
			m := nr
			m.Counts = Counts{Rows: nr.Rows, CrossRows: nr.CrossRows}
			byNode[nr.Node] = &m
			order = append(order, nr.Node)
		}
	}
	for _, p := range reduces {
		out.Partitions += p.Partitions
		out.ElapsedSec += p.ElapsedSec
		out.VerifySec += p.VerifySec
		for _, nr := range p.PerNode {
			m, ok := byNode[nr.Node]
			if !ok {
				return nil, fmt.Errorf("%w: condense merge: reduce %d counts node %d, which no map task read", tracefile.ErrBadInput, p.Shard, nr.Node)
			}
			m.Counts.add(nr.Counts)
		}
		out.Total.add(p.Total)
	}
	sort.Ints(order)
	for _, node := range order {
		m := byNode[node]
		m.finish(out.Bits)
		out.PerNode = append(out.PerNode, *m)
		out.Total.Rows += m.Rows
		out.Total.CrossRows += m.CrossRows
		out.BytesIn += m.BytesIn
		out.BytesOut += m.BytesOut
		out.CutSegments = append(out.CutSegments, m.CutSegments...)
	}
	if out.Total.Rows == 0 {
		return nil, fmt.Errorf("%w: %s: empty crawl (no URL rows in any node)", tracefile.ErrBadInput, out.Input)
	}
	out.Total.finish(out.Bits)
	return out, nil
}
