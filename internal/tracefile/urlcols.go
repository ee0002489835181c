package tracefile

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"
)

// URLColumns is the url and dest columns of one record batch of a raw URL
// log, the two a condense reads. It borrows the reader's buffers: valid
// until the reader moves on.
type URLColumns struct {
	offsets []int32 // len(Dest)+1 entries, or none for an empty batch
	data    []byte
	Dest    []uint16
}

// Len is the number of rows.
func (c *URLColumns) Len() int { return len(c.Dest) }

// URL is row i's URL. The string aliases the batch's buffer, which the
// reader reuses or, for a large batch, maps from the file and unmaps at the
// next NextURLs or Close: copy it to keep it. A segment truncated by
// another process while mapped faults when read; a caller that must
// survive that runs with debug.SetPanicOnFault.
func (c *URLColumns) URL(i int) string {
	b := c.data[c.offsets[i]:c.offsets[i+1]]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// URLSpan is rows lo..hi-1's URLs as an Arrow string column holds them:
// URL i is data[offsets[i-lo]:offsets[i-lo+1]]. Both alias the batch, as
// URL's strings do.
func (c *URLColumns) URLSpan(lo, hi int) (data []byte, offsets []int32) {
	if lo == hi {
		return nil, nil
	}
	return c.data, c.offsets[lo : hi+1]
}

// URLLen is the length of row i's URL, len(c.URL(i)).
func (c *URLColumns) URLLen(i int) int { return int(c.offsets[i+1] - c.offsets[i]) }

// URL log column layout: the buffers of each column in IPC order (validity,
// then values, or validity, offsets and data for strings).
const (
	urlCols    = 8
	urlBuffers = 19
	urlURLCol  = 2
	urlKindCol = 3
	urlTagCol  = 4
	urlDestCol = 7
)

// urlColBufs is, per column of the URL schema, its first buffer's index and
// its value width in bits (0 for a string column).
var urlColBufs = [urlCols]struct{ first, bits int }{
	{0, 64}, {2, 64}, {4, 0}, {7, 0}, {10, 0}, {13, 64}, {15, 16}, {17, 16},
}

// NextURLs advances to the next complete record batch and exposes its url
// and dest columns as [SegmentReader.URLColumns]. On an uncompressed URL
// segment it reads the stream's frames itself into one reused buffer and
// decodes only those two columns, with the same checks as [SegmentReader.Next]
// (every column's length and buffers, every string column's offsets), so it
// yields the same rows and stops at the same batch. Compressed segments go
// through the Arrow reader. Do not mix it with Next on one reader.
func (s *SegmentReader) NextURLs() bool {
	if !s.rawInit {
		s.rawInit = true
		s.raw = s.kind == KindURLs && !s.scan.compressed
		s.rawOff = s.scan.schemaEnd
		if s.restricted {
			s.rawOff = s.start
		}
	}
	if !s.raw {
		if !s.Next() {
			return false
		}
		b := NewURLBatch(s.cur)
		s.cols = URLColumns{offsets: b.URL.ValueOffsets(), data: b.URL.ValueBytes(), Dest: b.Dest.Uint16Values()}
		if b.Len() == 0 {
			s.cols = URLColumns{}
		}
		return true
	}
	if s.done {
		return false
	}
	if s.rawOff >= s.end {
		s.cols = URLColumns{}
		s.finish(nil)
		return false
	}
	if err := s.readRaw(); err != nil {
		s.cols = URLColumns{}
		s.finish(fmt.Errorf("corrupt batch %d: %w", s.batchesBefore+s.info.Batches, err))
		return false
	}
	s.info.Rows += int64(s.cols.Len())
	s.info.Batches++
	return true
}

// URLColumns is the current batch's url and dest columns after NextURLs,
// valid until the next call.
func (s *SegmentReader) URLColumns() *URLColumns { return &s.cols }

// readRaw reads the record batch message at s.rawOff (inside the prefix
// scanFrames checked) and points s.cols into its body.
func (s *SegmentReader) readRaw() error {
	var hdr [8]byte
	off := s.rawOff
	if _, err := s.rd.ReadAt(hdr[:], off); err != nil {
		return err
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(hdr[4:])))
	if binary.LittleEndian.Uint32(hdr[:4]) != 0xffffffff || metaLen <= 0 || metaLen > maxMetaLen || off+8+metaLen > s.scan.validEnd {
		return errors.New("bad message framing")
	}
	if int64(cap(s.rawMeta)) < metaLen {
		s.rawMeta = make([]byte, metaLen)
	}
	meta := s.rawMeta[:metaLen]
	if _, err := s.rd.ReadAt(meta, off+8); err != nil {
		return err
	}
	rows, nodes, bufs, bodyLen, err := parseBatchMeta(meta)
	if err != nil {
		return err
	}
	bodyOff := off + 8 + metaLen
	if bodyLen < 0 || bodyOff+bodyLen > s.scan.validEnd {
		return errors.New("body out of range")
	}
	var body []byte
	if bodyLen >= minMapBody && !s.noMap {
		body = s.mappedBody(bodyOff, bodyLen)
	}
	if body != nil {
		// Counted as readBufs would read it: the input a condense
		// reports is the same either way.
		for _, sp := range readSpans(meta, bufs, bodyLen) {
			s.rd.n += sp.hi - sp.lo
		}
	} else {
		if s.rawBody == nil {
			if b, ok := rawBodies.Get().(*[]byte); ok {
				s.rawBody = *b
			}
		}
		if int64(cap(s.rawBody)) < bodyLen {
			s.rawBody = make([]byte, bodyLen+bodyLen/8)
		}
		body = s.rawBody[:bodyLen]
		if err := s.readBufs(meta, bufs, body, bodyOff); err != nil {
			return err
		}
	}
	s.rawOff = bodyOff + bodyLen
	return s.setCols(meta, rows, nodes, bufs, body)
}

// urlReadBufs are the buffers of a URL batch whose bytes setCols reads:
// the url column's offsets and data, the offsets of the other string
// columns (checked), and dest's values. Of the others (validity bitmaps,
// the seq, time, source and worker values, kind's and tag's data) only
// the lengths are checked, from the metadata, so readBufs does not read
// them: 29% of a batch's body on the traces of docs/benchmarks.md.
var urlReadBufs = [...]int{
	urlColBufs[urlURLCol].first + 1, urlColBufs[urlURLCol].first + 2,
	urlColBufs[urlKindCol].first + 1, urlColBufs[urlTagCol].first + 1,
	urlColBufs[urlDestCol].first + 1,
}

// readGap is the largest gap between two buffers readBufs reads through
// rather than skips.
const readGap = 64 << 10

// span is a byte range of a batch body.
type span struct{ lo, hi int64 }

// readSpans is the byte ranges of a body of bodyLen bytes that hold the
// buffers of urlReadBufs (a buffer out of the body's range is left out,
// for setCols to report), those closer than readGap as one, in order.
func readSpans(meta []byte, bufs [2]int, bodyLen int64) []span {
	if bufs[1] < urlBuffers {
		return nil // setCols reports it
	}
	var spans [len(urlReadBufs)]span
	n := 0
	for _, i := range urlReadBufs {
		p := bufs[0] + 16*i
		o, l := int64(binary.LittleEndian.Uint64(meta[p:])), int64(binary.LittleEndian.Uint64(meta[p+8:]))
		if l <= 0 || o < 0 || o > bodyLen || l > bodyLen-o {
			continue
		}
		spans[n] = span{o, o + l}
		n++
	}
	sp := spans[:n]
	slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	out := sp[:0]
	for i := 0; i < len(sp); {
		lo, hi := sp[i].lo, sp[i].hi
		for i++; i < len(sp) && sp[i].lo <= hi+readGap; i++ {
			hi = max(hi, sp[i].hi)
		}
		out = append(out, span{lo, hi})
	}
	return out
}

// readBufs reads into body the spans of readSpans. The rest of body
// keeps what it held.
func (s *SegmentReader) readBufs(meta []byte, bufs [2]int, body []byte, bodyOff int64) error {
	for _, sp := range readSpans(meta, bufs, int64(len(body))) {
		if _, err := s.rd.ReadAt(body[sp.lo:sp.hi], bodyOff+sp.lo); err != nil {
			return err
		}
	}
	return nil
}

// minMapBody is the smallest batch body NextURLs serves from a mapping
// of the whole segment rather than reads (a variable so tests can map
// every body, or none). A body read is copied by the kernel from the page
// cache into one reused buffer, and the copy brings every byte of the
// input through the caches twice, evicting the tables a condense looks
// up; a mapped body is read in place. The segment is mapped once and its
// pages given back every segmentDrop bytes (see mappedBody): mapping and
// unmapping each batch instead cost a TLB shootdown on the other cores per
// batch and measured slower (6.0 against 7.0 s on a crawl-like 50M
// condense, docs/benchmarks.md). Mapped whole, against read, interleaved
// (2026-11-28, medians of 4-6 rounds): crawlpad 10M 2.09 -> 1.81 CPU s,
// crawl-like 10M 1.44 -> 1.29, uniform 10M 3.04 -> 2.20, crawl-like 50M
// 7.67 -> 7.53.
var minMapBody int64 = 64 << 10

// segmentDrop is how much of a mapped segment a reader reads on from the
// last pages it gave back before it gives back the pages behind the
// current batch (MADV_DONTNEED: they stay in the page cache, and a read
// of them maps them again), so that a mapped segment adds at most about
// this much to the reader's resident memory (a variable for tests). At
// 16 MiB a condense of uniform 10M at --memory 64MiB peaked 17 MB higher
// than at 4 MiB, and crawl-like 50M took 8.68 CPU s against 7.91 (4
// interleaved rounds): the fewer pages mapped, the fewer page-table and
// cache lines the lookups share the caches with.
var segmentDrop int64 = 4 << 20

// mappedBody returns the body of bodyLen bytes at off from the segment's
// mapping, mapping the segment (as far as it is valid) first, or nil when
// it cannot be mapped (the caller reads it). It gives back the pages of
// the batches before it.
func (s *SegmentReader) mappedBody(off, bodyLen int64) []byte {
	if off+bodyLen > int64(len(s.seg)) {
		s.unmapSegment()
		// As far as the file goes now: a file cut since it was opened
		// is read where it was cut (a short read, reported as a cut
		// segment), not faulted on. One cut while a batch of it is read
		// faults, which a condense reports as the file changing under
		// it.
		size := s.scan.validEnd
		if st, err := s.f.Stat(); err != nil {
			return nil
		} else if st.Size() < size {
			size = st.Size()
		}
		if off+bodyLen > size {
			return nil
		}
		b, m, ok := mapRange(s.f, 0, size)
		if !ok {
			s.noMap = true
			return nil
		}
		s.seg, s.segMapping, s.dropped = b, m, 0
	}
	if drop := off &^ (pageSize - 1); drop-s.dropped >= segmentDrop {
		dropPages(s.seg[s.dropped:drop])
		s.dropped = drop
	}
	return s.seg[off : off+bodyLen : off+bodyLen]
}

// unmapSegment releases the segment's mapping, if any.
func (s *SegmentReader) unmapSegment() {
	if s.segMapping != nil {
		unmapRange(s.segMapping)
		s.seg, s.segMapping, s.dropped = nil, nil, 0
	}
}

// rawBodies are read buffers of closed readers, for the next reader: a
// condense opens one reader per segment, and a fresh buffer of a batch's
// size for each faulted its pages in again.
var rawBodies sync.Pool

// releaseBody gives the reader's read buffer to the next reader.
func (s *SegmentReader) releaseBody() {
	if s.rawBody != nil {
		b := s.rawBody[:0]
		s.rawBody = nil
		rawBodies.Put(&b)
	}
}

// parseBatchMeta reads a record batch Message: its row count, the
// positions in b of its field node and buffer vectors (16-byte structs) and
// its body length. Malformed metadata is an error, never a panic.
func parseBatchMeta(b []byte) (rows int64, nodes, bufs [2]int, body int64, err error) {
	m, err := parseMessage(b)
	if err != nil {
		return 0, nodes, bufs, 0, err
	}
	if m.typ != hdrRecordBatch {
		return 0, nodes, bufs, 0, errors.New("not a record batch")
	}
	if m.compressed {
		return 0, nodes, bufs, 0, errors.New("compressed batch in an uncompressed segment")
	}
	// parseMessage checked the whole message: these cannot fail.
	f := fbuf{b}
	msg, _ := f.root()
	h, _, _ := f.sub(msg, 8)
	for i, slot := range []int{6, 8} {
		start, l, _ := f.vector(h, slot, 16)
		if p, _ := f.field(h, slot, 4); p < 0 {
			return 0, nodes, bufs, 0, errors.New("batch without field nodes or buffers")
		}
		if i == 0 {
			nodes = [2]int{start, l}
		} else {
			bufs = [2]int{start, l}
		}
	}
	return m.rows, nodes, bufs, m.body, nil
}

// setCols checks the batch's columns as validateBatch does for the Arrow
// reader's batches, and points s.cols at the url and dest columns.
func (s *SegmentReader) setCols(meta []byte, rows64 int64, nodes, bufs [2]int, body []byte) error {
	if nodes[1] < urlCols || bufs[1] < urlBuffers {
		return fmt.Errorf("%d field nodes and %d buffers, want %d and %d", nodes[1], bufs[1], urlCols, urlBuffers)
	}
	if rows64 < 0 || rows64 > int64(len(body))+1 {
		return fmt.Errorf("implausible row count %d", rows64)
	}
	rows := int(rows64)
	le := binary.LittleEndian
	node := func(c int) (length, nulls int64) {
		p := nodes[0] + 16*c
		return int64(le.Uint64(meta[p:])), int64(le.Uint64(meta[p+8:]))
	}
	// buf returns buffer i of the body, or an error when it lies outside.
	buf := func(i int) ([]byte, error) {
		p := bufs[0] + 16*i
		o, l := int64(le.Uint64(meta[p:])), int64(le.Uint64(meta[p+8:]))
		if l == 0 {
			return nil, nil
		}
		if o < 0 || l < 0 || o > int64(len(body)) || l > int64(len(body))-o {
			return nil, fmt.Errorf("buffer %d out of range", i)
		}
		return body[o : o+l], nil
	}
	var urlOff []int32
	var urlData []byte
	var dest []uint16
	for c := 0; c < urlCols; c++ {
		length, nulls := node(c)
		if length != rows64 {
			return fmt.Errorf("column %d: length %d in a %d-row batch", c, length, rows)
		}
		first, bits := urlColBufs[c].first, urlColBufs[c].bits
		// Arrow loads the bitmap for any non-zero null count (a negative
		// one is counted from the bitmap) and needs it whole then.
		if nulls != 0 {
			v, err := buf(first)
			if err != nil {
				return err
			}
			if len(v) < (rows+7)/8 {
				return fmt.Errorf("column %d: short validity bitmap", c)
			}
		}
		if bits > 0 {
			v, err := buf(first + 1)
			if err != nil {
				return err
			}
			if rows > 0 && len(v)*8 < rows*bits {
				return fmt.Errorf("column %d: short data buffer", c)
			}
			if c == urlDestCol && rows > 0 {
				dest = u16s(v[:2*rows], &s.rawDest)
			}
			continue
		}
		ob, err := buf(first + 1)
		if err != nil {
			return err
		}
		data, err := buf(first + 2)
		if err != nil {
			return err
		}
		if len(ob) < 4*(rows+1) {
			if rows == 0 {
				continue
			}
			return fmt.Errorf("column %d: short offsets buffer", c)
		}
		offs := i32s(ob[:4*(rows+1)], c == urlURLCol, &s.rawOffs)
		prev := offs[0]
		if prev < 0 {
			return fmt.Errorf("column %d: negative offset", c)
		}
		for i := 1; i <= rows; i++ {
			o := offs[i]
			if o < prev || int(o) > len(data) {
				return fmt.Errorf("column %d: string offset out of range at row %d", c, i-1)
			}
			prev = o
		}
		if c == urlURLCol {
			urlOff, urlData = offs, data
		}
	}
	if rows == 0 {
		s.cols = URLColumns{}
		return nil
	}
	s.cols = URLColumns{offsets: urlOff, data: urlData, Dest: dest}
	return nil
}

// i32s views b as little-endian int32s, in place when b is aligned (IPC
// buffers are 8-byte aligned) and otherwise in a copy kept in *scratch
// when keep is true (a temporary one otherwise).
func i32s(b []byte, keep bool, scratch *[]int32) []int32 {
	n := len(b) / 4
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	var v []int32
	if keep {
		if cap(*scratch) < n {
			*scratch = make([]int32, n)
		}
		v = (*scratch)[:n]
	} else {
		v = make([]int32, n)
	}
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// u16s views b as little-endian uint16s, copying into *scratch when b is
// not aligned.
func u16s(b []byte, scratch *[]uint16) []uint16 {
	n := len(b) / 2
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	if cap(*scratch) < n {
		*scratch = make([]uint16, n)
	}
	v := (*scratch)[:n]
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}
