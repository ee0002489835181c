package condense

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/crawltrace/crawltrace/internal/progress"
)

// verify checks the fingerprint ranges in ranges (of total contiguous
// ranges), whose spill records are in chunks, and adds up the counts.
func (r *run) verify(ctx context.Context, ranges []int, total int, chunks rangeChunks) (map[int]*Counts, Counts, error) {
	perNode := map[int]*Counts{}
	for _, n := range r.nodes {
		perNode[n] = &Counts{}
	}
	r.totalRanges = total
	var sum Counts
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.Workers)
	limit := r.cfg.MemoryBytes / int64(r.cfg.Workers) / 3
	if limit < minPartitionBytes {
		limit = minPartitionBytes
	}
	var done atomic.Int64
	prog := progress.New(r.cfg.Progress, "condense: verifying", "ranges", int64(len(ranges)))
	defer prog.Finish()
	for _, p := range ranges {
		cs := chunks[p]
		g.Go(func() error {
			res := newPartResult()
			if err := r.processChunks(gctx, cs, limit, 0, res); err != nil {
				return err
			}
			for i := range cs {
				cs[i].mem = nil // a block kept in memory is garbage now
			}
			mu.Lock()
			res.addTo(&sum, perNode)
			mu.Unlock()
			prog.Set(done.Add(1))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, Counts{}, err
	}
	return perNode, sum, nil
}

type partResult struct {
	total Counts
	nodes []*Counts // by node; nil for a node with no records
}

func newPartResult() *partResult { return &partResult{} }

// addTo adds the part's counts to sum and perNode.
func (p *partResult) addTo(sum *Counts, perNode map[int]*Counts) {
	sum.add(p.total)
	for n, c := range p.nodes {
		if c == nil {
			continue
		}
		if perNode[n] == nil {
			perNode[n] = &Counts{}
		}
		perNode[n].add(*c)
	}
}

// node is node n's counts (a slice, not a map: it is looked up for every
// distinct URL).
func (p *partResult) node(n int) *Counts {
	if n >= len(p.nodes) {
		p.nodes = append(p.nodes, make([]*Counts, n+1-len(p.nodes))...)
	}
	c := p.nodes[n]
	if c == nil {
		c = &Counts{}
		p.nodes[n] = c
	}
	return c
}

// maxSplitDepth bounds recursive re-partitioning of oversized partitions.
const maxSplitDepth = 4

// processChunks verifies the records in chunks (all of one fingerprint
// range). When they exceed limit bytes it splits them by the next 4 bits of
// the fingerprint below the range and recurses.
func (r *run) processChunks(ctx context.Context, chunks []spillChunk, limit int64, depth int, res *partResult) error {
	var size int64
	for _, c := range chunks {
		size += c.n
	}
	if size == 0 {
		return nil
	}
	if size > limit && depth < maxSplitDepth {
		return r.split(ctx, chunks, limit, depth, res)
	}
	lb := loadBufs.Get().(*loadBuf)
	defer loadBufs.Put(lb)
	if int64(cap(lb.buf)) < size {
		lb.buf = make([]byte, 0, size)
	}
	buf, err := readChunks(chunks, lb.buf[:0])
	if err != nil {
		return err
	}
	lb.buf = buf
	if ok, err := groupBuffer(buf, &lb.groups, res); ok || err != nil {
		return err
	}
	lb.ents, err = countBuffer(buf, lb.ents[:0], res)
	return err
}

// loadBuf is the memory one reduce worker reuses from range to range.
type loadBuf struct {
	buf    []byte
	ents   []entry
	groups groupScratch
}

var loadBufs = sync.Pool{New: func() any { return new(loadBuf) }}

// shiftFor is how far the fingerprint is shifted to pick a sub-partition at
// a given split depth: below the bits that chose the top-level range.
func (r *run) shiftFor(depth int) uint {
	used := bits.Len(uint(r.totalRanges-1)) + 4*depth
	s := r.cfg.Bits - used - 4
	if s < 0 {
		s = 0
	}
	return uint(s)
}

func (r *run) split(ctx context.Context, chunks []spillChunk, limit int64, depth int, res *partResult) error {
	shift := r.shiftFor(depth)
	dir, err := os.MkdirTemp(r.cfg.TempDir, "split-")
	if err != nil {
		return fmt.Errorf("condense: %w", err)
	}
	defer os.RemoveAll(dir)
	// The 16 sub-ranges go to one bucket file, as the map side writes them.
	path := filepath.Join(dir, bucketFileName(0))
	bw, err := newBucketWriter(path, 16, spillBufBytes)
	if err != nil {
		return err
	}
	defer bw.abort()
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := scanChunk(c, func(rec []byte) error {
			return bw.writeRec(int((binary.LittleEndian.Uint64(rec)>>shift)&15), rec)
		})
		if err != nil {
			return err
		}
	}
	if err := bw.close(); err != nil {
		return err
	}
	refs, err := readBucketIndex(path)
	if err != nil {
		return err
	}
	subs := rangeChunks{}
	chunksByRange(path, refs, subs)
	for k := 0; k < 16; k++ {
		if err := r.processChunks(ctx, subs[k], limit, depth+1, res); err != nil {
			return err
		}
	}
	return nil
}

type entry struct {
	fp   uint64
	off  uint32 // offset of the URL bytes in the buffer
	n    uint32 // URL length
	node uint16
}

// countBuffer counts distinct URLs and fingerprints in one loaded partition
// and finds its collisions: sort by fingerprint, then compare the URL
// strings within each group of equal fingerprints. processChunks counts
// with groupBuffer, by hashing, and with this only the ranges holding
// nodes 64 and above; it is groupBuffer's reference in its tests.
func countBuffer(buf []byte, ents []entry, res *partResult) ([]entry, error) {
	if want := len(buf) / 48; cap(ents) < want {
		ents = make([]entry, 0, want) // records are rarely shorter than 48 bytes
	}
	for off := 0; off < len(buf); {
		fp, node, u, next, err := decodeRec(buf, off)
		if err != nil {
			return ents, fmt.Errorf("condense: spill: %w", err)
		}
		ents = append(ents, entry{fp: fp, off: uint32(next - len(u)), n: uint32(len(u)), node: node})
		off = next
	}
	sortByFP(ents)
	var group []distinctURL
	var fpNodes []uint16
	for i := 0; i < len(ents); {
		// The common case: every record of the fingerprint holds the same
		// URL (one URL, seen on one or more nodes).
		j, same := i+1, true
		first := buf[ents[i].off : ents[i].off+ents[i].n]
		for ; j < len(ents) && ents[j].fp == ents[i].fp; j++ {
			same = same && string(buf[ents[j].off:ents[j].off+ents[j].n]) == string(first)
		}
		if same {
			res.total.DistinctFPs++
			res.total.DistinctURLs++
			fpNodes = fpNodes[:0]
			for k := i; k < j; k++ {
				if !hasNode(fpNodes, ents[k].node) {
					fpNodes = append(fpNodes, ents[k].node)
					c := res.node(int(ents[k].node))
					c.DistinctFPs++
					c.DistinctURLs++
				}
			}
			i = j
			continue
		}
		j = i
		group = group[:0]
		fpNodes = fpNodes[:0]
		for ; j < len(ents) && ents[j].fp == ents[i].fp; j++ {
			e := ents[j]
			group, fpNodes = addToGroup(group, fpNodes, buf[e.off:e.off+e.n], e.node)
		}
		countGroup(res, ents[i].fp, group, fpNodes)
		i = j
	}
	return ents, nil
}

// distinctURL is one of the URLs of a fingerprint and the nodes that
// logged it.
type distinctURL struct {
	u     []byte
	nodes []uint16
}

func hasNode(s []uint16, n uint16) bool { return slices.Contains(s, n) }

// addToGroup adds URL u, logged by node, to the distinct URLs of one
// fingerprint (group) and node to the nodes that logged any of them.
func addToGroup(group []distinctURL, fpNodes []uint16, u []byte, node uint16) ([]distinctURL, []uint16) {
	if !hasNode(fpNodes, node) {
		fpNodes = append(fpNodes, node)
	}
	k := slices.IndexFunc(group, func(d distinctURL) bool { return string(d.u) == string(u) })
	if k < 0 {
		group = append(group, distinctURL{u: u, nodes: []uint16{node}})
	} else if !hasNode(group[k].nodes, node) {
		group[k].nodes = append(group[k].nodes, node)
	}
	return group, fpNodes
}

// countGroup counts the distinct URLs of one fingerprint, group (nodes is
// every node that logged any of them): one distinct fingerprint, and a
// collision for every pair of URLs, in all and on each node.
func countGroup(res *partResult, fp uint64, group []distinctURL, nodes []uint16) {
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
		for _, n := range nodes {
			c := res.node(int(n))
			c.DistinctFPs++
			c.DistinctURLs++
		}
		return
	}
	for _, n := range nodes {
		c := res.node(int(n))
		c.DistinctFPs++
		var mine []int
		for k, d := range group {
			if hasNode(d.nodes, n) {
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
}

func collision(fp uint64, a, b []byte) Collision {
	x, y := string(a), string(b)
	if y < x {
		x, y = y, x
	}
	return Collision{FP: fp, FPHex: fmt.Sprintf("%016x", fp), A: x, B: y}
}

// sortByFP sorts ents by fingerprint: one in-place pass distributes them
// into about len/16 buckets of consecutive fingerprint ranges (a range's
// fingerprints are uniform below its prefix), then each small bucket is
// sorted on its own, in cache.
func sortByFP(ents []entry) {
	byFP := func(a, b entry) int { return cmp.Compare(a.fp, b.fp) }
	n := len(ents)
	if n < 1024 {
		slices.SortFunc(ents, byFP)
		return
	}
	lo, hi := ents[0].fp, ents[0].fp
	for _, e := range ents {
		lo, hi = min(lo, e.fp), max(hi, e.fp)
	}
	k := bits.Len(uint(n / 16))
	shift := max(bits.Len64(hi-lo)-k, 0)
	nb := 1 << k
	start := make([]uint32, nb+1)
	for _, e := range ents {
		start[(e.fp-lo)>>shift+1]++
	}
	for b := 1; b <= nb; b++ {
		start[b] += start[b-1]
	}
	next := slices.Clone(start[:nb])
	for b := 0; b < nb; b++ {
		for end := start[b+1]; next[b] < end; {
			i := next[b]
			d := (ents[i].fp - lo) >> shift
			if int(d) == b {
				next[b]++
				continue
			}
			j := next[d]
			ents[i], ents[j] = ents[j], ents[i]
			next[d]++
		}
	}
	for b := 0; b < nb; b++ {
		bk := ents[start[b]:start[b+1]]
		if len(bk) > 12 {
			slices.SortFunc(bk, byFP)
			continue
		}
		for i := 1; i < len(bk); i++ {
			for j := i; j > 0 && bk[j].fp < bk[j-1].fp; j-- {
				bk[j], bk[j-1] = bk[j-1], bk[j]
			}
		}
	}
}

// countAggs counts the map side's aggTable part by part, on cfg.Workers
// workers, and adds up the counts as verify does.
func (r *run) countAggs() (map[int]*Counts, Counts) {
	perNode := map[int]*Counts{}
	for _, n := range r.nodes {
		perNode[n] = &Counts{}
	}
	var sum Counts
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(r.cfg.Workers)
	for p := 0; p < aggParts; p++ {
		g.Go(func() error {
			res := newPartResult()
			countAgg(r.agg, p, res)
			mu.Lock()
			res.addTo(&sum, perNode)
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	r.agg.release()
	r.agg = nil
	return perNode, sum
}
