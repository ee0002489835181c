package condense

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/crawltrace/crawltrace/internal/streamcopy"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// A map worker writes all its spilled records to one bucket file: records
// are gathered per fingerprint range in memory and appended as blocks of
// one range each; an index of the blocks (range, offset, length) and a
// footer end the file. A reduce reads the blocks of its ranges from every
// bucket file. (One file per range and worker was the layout before: with
// 512 ranges, opening the files alone took a fifth of the CPU.)
//
// File layout, little-endian:
//
//	blocks      spill records (see appendRec), one range per block
//	index       count x (range uint32, length uint32, offset uint64)
//	footer      index offset uint64, count uint64, bucketMagic uint64
const bucketMagic = 0x31_4b_43_55_42_54_43_43 // "CCTBUCK1"

const (
	bucketIndexEntry = 16
	bucketFooter     = 24
)

// bucketFileName is worker w's bucket file.
func bucketFileName(w int) string { return fmt.Sprintf("w%03d.buckets", w) }

// bucketGlob matches the workers' bucket files in a directory (not a map
// task's head part's, headBucketFile, which the reduce reads only when the
// merge keeps the part).
const bucketGlob = "w*.buckets"

type blockRef struct {
	rng uint32
	n   uint32
	off uint64
}

// bucketWriter writes one worker's bucket file.
type bucketWriter struct {
	f     *os.File
	w     *bufio.Writer
	path  string
	blk   int      // a range's records are written when they reach blk bytes
	bufs  [][]byte // pending records per range
	off   uint64
	index []blockRef
	// mem, when set, is an allowance of memory shared by the workers of
	// an unsharded run: a full block that fits in it is kept in memory
	// (in kept) instead of being written, and the reduce reads it from
	// there. The blocks beyond it go to the file.
	mem  *memAllowance
	kept rangeChunks
	// stage holds each range's newest records (stageSize bytes a range),
	// and staged how many: write gathers a range's records there, in
	// cache, and moves them to the range's block a whole cache line at a
	// time with non-temporal stores (internal/streamcopy), so that the
	// block's lines are written without being read from memory first. A
	// block's records are its bytes followed by its staged bytes; flush
	// moves the staged bytes to the block first.
	stage  []byte
	staged []int32
}

// stageSize is the staging bytes of a range, stageMax the longest record
// staged (longer ones are appended to the block directly): a staged
// record always fits once the stage's whole lines are moved out.
//
// Scattering the records of uniform 10M and 50M to 256-1,024 ranges'
// blocks read each block's lines from memory before writing them; staged,
// BenchmarkScatter (internal/streamcopy) takes 27 ns a record, 50
// directly.
const (
	stageSize = 256
	stageMax  = stageSize - 64
)

// memAllowance is bytes of spill blocks that may still be kept in memory;
// safe for concurrent use.
type memAllowance struct{ left atomic.Int64 }

func newMemAllowance(n int64) *memAllowance {
	m := &memAllowance{}
	m.left.Store(n)
	return m
}

// take reserves n bytes, or reports that they do not fit.
func (m *memAllowance) take(n int64) bool {
	if m.left.Add(-n) >= 0 {
		return true
	}
	m.left.Add(n)
	return false
}

func newBucketWriter(path string, ranges, blk int) (*bucketWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("condense: buckets: %w", err)
	}
	return &bucketWriter{f: f, w: bufio.NewWriterSize(f, 256<<10), path: path, blk: blk, bufs: make([][]byte, ranges),
		stage: make([]byte, ranges*stageSize), staged: make([]int32, ranges)}, nil
}

// write adds one spill record (head is fingerprint and node) to range g.
func (b *bucketWriter) write(g int, head []byte, u string) error {
	n := len(head) + uvarintLen(len(u)) + len(u)
	if n > stageMax {
		b.unstage(g)
		if err := b.room(g, n); err != nil {
			return err
		}
		return b.added(g, appendRec(b.pending(g), head, u))
	}
	buf, f := b.pending(g), int(b.staged[g])
	if len(buf)+f+n > cap(buf) {
		// The block is full: flush it, staged records included.
		if err := b.flush(g); err != nil {
			return err
		}
		buf, f = b.pending(g), 0
	}
	st := b.stage[g*stageSize : (g+1)*stageSize]
	if f+n > stageSize {
		whole := f &^ 63
		k := len(buf)
		buf = buf[:k+whole]
		streamcopy.Lines(buf[k:], st[:whole])
		b.bufs[g] = buf
		f = copy(st, st[whole:f])
	}
	f += copy(st[f:], head)
	f += binary.PutUvarint(st[f:], uint64(len(u)))
	f += copy(st[f:], u)
	b.staged[g] = int32(f)
	if len(buf)+f >= b.blk {
		return b.flush(g)
	}
	return nil
}

// unstage appends range g's staged records to its block.
func (b *bucketWriter) unstage(g int) {
	if f := b.staged[g]; f > 0 {
		b.bufs[g] = append(b.pending(g), b.stage[g*stageSize:g*stageSize+int(f)]...)
		b.staged[g] = 0
	}
}

// writeRec adds an encoded spill record to range g.
func (b *bucketWriter) writeRec(g int, rec []byte) error {
	b.unstage(g)
	if err := b.room(g, len(rec)); err != nil {
		return err
	}
	return b.added(g, append(b.pending(g), rec...))
}

// room writes range g's pending records first when n more bytes would
// not fit their buffer, so that a block is never copied to a larger
// buffer to grow (a kept block would be copied every time).
func (b *bucketWriter) room(g, n int) error {
	if buf := b.bufs[g]; len(buf) > 0 && len(buf)+n > cap(buf) {
		return b.flush(g)
	}
	return nil
}

func (b *bucketWriter) pending(g int) []byte {
	if b.bufs[g] == nil {
		b.bufs[g] = make([]byte, 0, b.blk)
	}
	return b.bufs[g]
}

// added keeps range g's records, writing them as a block once they reach
// the block size.
func (b *bucketWriter) added(g int, buf []byte) error {
	b.bufs[g] = buf
	if len(buf) >= b.blk {
		return b.flush(g)
	}
	return nil
}

func (b *bucketWriter) flush(g int) error {
	b.unstage(g)
	buf := b.bufs[g]
	if len(buf) == 0 {
		return nil
	}
	// The block's lines written by streamcopy are read next by another
	// goroutine, or by the write below.
	streamcopy.Fence()
	if b.mem != nil && b.mem.take(int64(cap(buf))) {
		if b.kept == nil {
			b.kept = rangeChunks{}
		}
		b.kept[g] = append(b.kept[g], spillChunk{mem: buf, n: int64(len(buf))})
		b.bufs[g] = nil // a new block is allocated for the next records
		return nil
	}
	if _, err := b.w.Write(buf); err != nil {
		return fmt.Errorf("condense: buckets %s: %w", b.path, err)
	}
	b.index = append(b.index, blockRef{rng: uint32(g), n: uint32(len(buf)), off: b.off})
	b.off += uint64(len(buf))
	b.bufs[g] = buf[:0]
	return nil
}

// close writes the pending blocks, the index and the footer.
func (b *bucketWriter) close() error {
	for g := range b.bufs {
		if err := b.flush(g); err != nil {
			return err
		}
	}
	var e [bucketIndexEntry]byte
	for _, r := range b.index {
		binary.LittleEndian.PutUint32(e[0:], r.rng)
		binary.LittleEndian.PutUint32(e[4:], r.n)
		binary.LittleEndian.PutUint64(e[8:], r.off)
		b.w.Write(e[:])
	}
	var ft [bucketFooter]byte
	binary.LittleEndian.PutUint64(ft[0:], b.off)
	binary.LittleEndian.PutUint64(ft[8:], uint64(len(b.index)))
	binary.LittleEndian.PutUint64(ft[16:], bucketMagic)
	b.w.Write(ft[:])
	err := b.w.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	b.f = nil
	if err != nil {
		return fmt.Errorf("condense: buckets %s: %w", b.path, err)
	}
	return nil
}

// abort closes the file if close was not reached.
func (b *bucketWriter) abort() {
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
}

// spillChunk is a run of spill records: a block of a bucket file, a whole
// spill file (a range split further), or a block kept in memory (mem).
type spillChunk struct {
	path string
	off  int64
	n    int64
	mem  []byte
}

// rangeChunks maps each fingerprint range to its blocks in every bucket
// file of dirs (glob patterns of directories).
type rangeChunks map[int][]spillChunk

// readBuckets reads the index of every bucket file matching the glob
// patterns of their directories.
func readBuckets(dirPatterns ...string) (rangeChunks, error) {
	out := rangeChunks{}
	for _, d := range dirPatterns {
		paths, err := filepath.Glob(filepath.Join(d, bucketGlob))
		if err != nil {
			return nil, fmt.Errorf("condense: %w", err)
		}
		for _, p := range paths {
			refs, err := readBucketIndex(p)
			if err != nil {
				return nil, err
			}
			chunksByRange(p, refs, out)
		}
	}
	return out, nil
}

// readBucketIndex reads and checks a bucket file's footer and index.
func readBucketIndex(path string) ([]blockRef, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: %s: not a complete bucket file (%s)", tracefile.ErrCorrupt, path, why)
	}
	size := st.Size()
	if size < bucketFooter {
		return nil, bad("shorter than its footer")
	}
	var ft [bucketFooter]byte
	if _, err := f.ReadAt(ft[:], size-bucketFooter); err != nil {
		return nil, fmt.Errorf("condense: %s: %w", path, err)
	}
	idxOff, count := binary.LittleEndian.Uint64(ft[0:]), binary.LittleEndian.Uint64(ft[8:])
	if binary.LittleEndian.Uint64(ft[16:]) != bucketMagic {
		return nil, bad("no footer")
	}
	if idxOff > uint64(size) || count > uint64(size)/bucketIndexEntry || idxOff+count*bucketIndexEntry+bucketFooter != uint64(size) {
		return nil, bad("index out of range")
	}
	raw := make([]byte, count*bucketIndexEntry)
	if _, err := io.ReadFull(io.NewSectionReader(f, int64(idxOff), int64(len(raw))), raw); err != nil {
		return nil, fmt.Errorf("condense: %s: %w", path, err)
	}
	refs := make([]blockRef, count)
	for i := range refs {
		e := raw[i*bucketIndexEntry:]
		refs[i] = blockRef{rng: binary.LittleEndian.Uint32(e[0:]), n: binary.LittleEndian.Uint32(e[4:]), off: binary.LittleEndian.Uint64(e[8:])}
		if refs[i].off+uint64(refs[i].n) > idxOff {
			return nil, bad("block out of range")
		}
	}
	return refs, nil
}

// readChunks appends the bytes of chunks to buf, opening each file once.
func readChunks(chunks []spillChunk, buf []byte) ([]byte, error) {
	byPath := slices.Clone(chunks)
	slices.SortFunc(byPath, func(a, b spillChunk) int {
		if a.path != b.path {
			if a.path < b.path {
				return -1
			}
			return 1
		}
		return int(a.off - b.off)
	})
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for _, c := range byPath {
		if c.mem != nil {
			buf = append(buf, c.mem...)
			continue
		}
		if f == nil || f.Name() != c.path {
			if f != nil {
				f.Close()
			}
			var err error
			if f, err = os.Open(c.path); err != nil {
				return buf, fmt.Errorf("condense: %w", err)
			}
		}
		n := len(buf)
		if int64(cap(buf)-n) < c.n {
			return buf, fmt.Errorf("condense: %s changed while being read", c.path)
		}
		buf = buf[:n+int(c.n)]
		if _, err := f.ReadAt(buf[n:], c.off); err != nil {
			return buf[:n], fmt.Errorf("condense: %s: %w", c.path, err)
		}
	}
	return buf, nil
}

// scanChunk calls fn for every record of c, encoded as it is stored.
func scanChunk(c spillChunk, fn func(rec []byte) error) error {
	b, err := readChunks([]spillChunk{c}, make([]byte, 0, c.n))
	if err != nil {
		return err
	}
	for off := 0; off < len(b); {
		_, _, _, next, err := decodeRec(b, off)
		if err != nil {
			return fmt.Errorf("%w: condense: spill %s: %w", tracefile.ErrCorrupt, c.path, err)
		}
		if err := fn(b[off:next]); err != nil {
			return err
		}
		off = next
	}
	return nil
}

// add appends the chunks of o to c, range by range.
func (c rangeChunks) add(o rangeChunks) {
	for g, cs := range o {
		c[g] = append(c[g], cs...)
	}
}

// chunksByRange groups the blocks of the bucket file at path by range.
func chunksByRange(path string, refs []blockRef, out rangeChunks) {
	for _, r := range refs {
		out[int(r.rng)] = append(out[int(r.rng)], spillChunk{path: path, off: int64(r.off), n: int64(r.n)})
	}
}
