package condense

import (
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/crawltrace/crawltrace/internal/hugemem"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// aggTable is the map workers' shared, exact table of the distinct URLs
// they have read, each with the set of nodes that logged it: while the
// distinct URLs fit the memory budget, the map side counts in memory and
// nothing is spilled, sorted or read back. Identical URLs share one entry
// (one copy of the string, compared in full before a row is counted as a
// repeat), and a fingerprint found with a different string is marked
// colliding, so the counts are those of the spill and reduce: countAgg
// counts the table part by part. Once the table reaches its limit it takes
// no new URL; the workers then spill (as they do where the recent-URL
// table in front of it drops too few rows), and at the end the table is dumped
// into a bucket file as ordinary spill records (one per URL and node:
// nothing is lost) for the reduce.
//
// The table is split by fingerprint into aggParts parts, each an
// open-addressing table with linear probing under a lock of its own (two
// workers seldom want the same one). A slot is a fingerprint and a
// reference: where the URL's copy is (48 bits: its offset in the arena)
// and the set of nodes (16 bits, so a table serves nodes 0..15).
//
// The copies are in one arena, a region of the table's whole limit
// reserved at once (memory never written is never backed), each prefixed
// by its length as a uvarint. Each worker takes chunks of it in turn and
// fills its own. A location is thus an offset, read with no lookup of
// which chunk holds it (a chunk list cost a dependent load before every
// copy: 0.5 of 8 CPU s on crawl-like 50M).
//
// The arena and the parts' first slots (one block for all) are huge-page
// blocks (hugemem): lookups land at random in a few hundred megabytes, and
// on small pages nearly every one missed the TLB (crawl-like 50M, 3
// interleaved runs: see docs/benchmarks.md). release frees them; slots a
// part grows into are Go memory, since a prefetch hint may still read the
// slots a part has left.
type aggTable struct {
	parts    [aggParts]aggPart
	keyShift uint // fingerprints narrower than 64 bits are scaled up first
	arena    []byte
	// next is the arena's first byte no chunk holds yet.
	next   atomic.Int64
	chunks []aggChunk   // each worker's chunk
	bytes  atomic.Int64 // slots and chunks held
	limit  int64
	// base is the bytes held before the first URL: the first slots and
	// the workers' first chunks.
	base int64
	// first and region are the blocks of the parts' first slots and of
	// the arena.
	first, region *hugemem.Block
	// sized is the block of slots the parts were moved into by size
	// (nil: none), and sizing whether size has been called.
	sized  *hugemem.Block
	sizing atomic.Bool
}

// aggPart is one part of an aggTable. Its slots are replaced when it
// grows. Readers outside the lock (prefetch hints, which may be stale)
// load the slots and their words atomically, so the words of a
// published slot array are stored atomically too.
//
// Every lookup reads cur, and a lookup that writes takes mu: the two are
// a cache line apart, so that a lock taken on one core does not take the
// other cores' copies of cur away (each such lookup missed the cache
// twice, at the prefetch hint and at the lock).
type aggPart struct {
	cur atomic.Pointer[aggSlots]
	_   [64 - 8]byte
	mu  spinLock
	// used is the slots in use.
	used int
	// colliding holds the fingerprints found with two different URLs.
	colliding map[uint64]struct{}
	_         [64 - 8 - 8 - 8]byte
}

type aggSlots struct {
	s     []aggSlot
	shift uint // 64 - log2(len(s))
	first bool // s is in the table's block of first slots
}

type aggSlot struct {
	fp  uint64
	ref uint64 // location << 16 | node set; 0: empty (a set is never empty)
}

// aggChunk is the part of the arena a worker copies URLs into: bytes
// used to end. Only that worker writes it (a cache line each). urls and
// copied count the URLs it added and the arena bytes their copies took,
// for projected.
type aggChunk struct {
	used, end    int64
	urls, copied atomic.Int64
	_            [64 - 32]byte
}

const (
	aggPartBits = 8
	aggParts    = 1 << aggPartBits
	// aggMaxNodes is the nodes a table's node sets hold.
	aggMaxNodes  = 16
	aggChunkSize = 4 << 20
	// aggOwnChunk is the URL length from which a copy gets a chunk of its
	// own.
	aggOwnChunk = aggChunkSize / 8
	// aggMaxURL is the longest URL a table keeps (a longer one makes it
	// refuse it: the workers spill).
	aggMaxURL   = 1 << 28
	aggInitSlot = 64
	aggSlotSize = int64(unsafe.Sizeof(aggSlot{}))
	// aggEmpty is the memory of an empty table sized for no URLs, and
	// aggPerWorker what each worker's first chunk adds.
	aggEmpty     = aggParts * aggInitSlot * aggSlotSize
	aggPerWorker = aggChunkSize
	aggGolden    = 0x9E3779B97F4A7C15
)

// aggUsable reports whether a table can count a crawl with these nodes
// (any number of workers shares one).
func aggUsable(nodes []int) bool {
	for _, n := range nodes {
		if n < 0 || n >= aggMaxNodes {
			return false
		}
	}
	return true
}

// newAggTable returns a table for workers workers, of at most about
// limit bytes, its parts sized at first for about expect URLs in all
// (within a quarter of the limit): a part that grows moves every URL it
// holds again. (On crawl-like 10M, sized for 625,000 URLs: 1.22 against
// 1.32 s median wall, 6 interleaved runs; on 50M alike.)
func newAggTable(workers int, fpBits int, limit, expect int64) *aggTable {
	t := &aggTable{keyShift: uint(64 - fpBits), limit: limit}
	n := aggInitSlot
	for int64(n)*aggParts*3 < expect*4 && int64(n)*2*aggParts*aggSlotSize <= limit/4 {
		n *= 2
	}
	t.first = hugemem.Alloc(n * aggParts * int(aggSlotSize))
	all := unsafe.Slice((*aggSlot)(unsafe.Pointer(unsafe.SliceData(t.first.Bytes()))), n*aggParts)
	for p := range t.parts {
		t.parts[p].cur.Store(&aggSlots{s: all[p*n : (p+1)*n : (p+1)*n], shift: slotShift(n), first: true})
	}
	t.bytes.Store(int64(n) * aggParts * aggSlotSize)
	// The arena: the limit, and a chunk for each worker beyond it (a
	// worker may start one just below the limit).
	t.region = hugemem.Reserve(int(min(limit+int64(workers)*aggChunkSize, 1<<47)), 64<<20)
	t.arena = t.region.Bytes()
	// The first line is never a copy, so that no location is 0.
	t.next.Store(64)
	t.chunks = make([]aggChunk, workers)
	for w := range t.chunks {
		if !t.newChunk(w, 0) {
			panic("condense: an arena without room for its workers' first chunks")
		}
	}
	t.base = t.bytes.Load()
	return t
}

// aggSlotsPerURL is the slot memory projected for a URL: two slots, the
// middle of what a part holds (it doubles when three in four of its slots
// are used, so it has 4/3 to 8/3 slots a URL).
const aggSlotsPerURL = 2 * aggSlotSize

// projected is the memory the table would hold at the end of a run of
// total rows, read of them read so far, if it went on taking new URLs at
// the rate it has: its base, and for each URL projected its copy (as long
// as the copies so far, on average) and its slots.
func (t *aggTable) projected(read, total int64) int64 {
	if read <= 0 {
		return math.MaxInt64
	}
	urls, copied := t.added()
	grow := float64(copied+urls*aggSlotsPerURL) * float64(max(total, read)) / float64(read)
	return t.base + int64(min(grow, math.MaxInt64/2))
}

// testRoomy, when set by a test, sees each projection roomy judges.
var testRoomy func(projected, limit int64)

// roomy reports whether the table is on course to hold the run with a
// quarter of its limit to spare (see the few switch in mapper.do).
func (t *aggTable) roomy(read, total int64) bool {
	p := t.projected(read, total)
	if testRoomy != nil {
		testRoomy(p, t.limit)
	}
	return p <= t.limit/4*3
}

// projectedURLs is the URLs the table would hold at the end of the run,
// as projected counts them.
func (t *aggTable) projectedURLs(read, total int64) int64 {
	urls, _ := t.added()
	return int64(float64(urls) * float64(max(total, read)) / float64(max(read, 1)))
}

// added is the URLs the workers have added and the arena bytes their
// copies took.
func (t *aggTable) added() (urls, copied int64) {
	for w := range t.chunks {
		urls += t.chunks[w].urls.Load()
		copied += t.chunks[w].copied.Load()
	}
	return urls, copied
}

func slotShift(n int) uint { return uint(64 - bits.Len(uint(n-1))) }

func newAggSlots(n int) *aggSlots {
	return &aggSlots{s: make([]aggSlot, n), shift: slotShift(n)}
}

// newChunk gives worker w a new chunk of the arena, for a copy of need
// bytes at least. It reports false when the arena has no room left.
func (t *aggTable) newChunk(w int, need int64) bool {
	size := int64(aggChunkSize)
	if need > aggOwnChunk {
		size = (need + 63) &^ 63
	}
	start := t.next.Add(size) - size
	if start+size > int64(len(t.arena)) {
		return false
	}
	t.chunks[w].used, t.chunks[w].end = start, start+size
	t.bytes.Add(size)
	return true
}

// release frees the table's blocks. Nothing may use the table
// afterwards.
func (t *aggTable) release() {
	for p := range t.parts {
		t.parts[p].cur.Store(&aggSlots{})
	}
	t.arena = nil
	if t.first != nil {
		t.first.Free()
		t.region.Free()
	}
	if t.sized != nil {
		t.sized.Free()
	}
	t.first, t.region, t.sized = nil, nil, nil
}

// size moves every part into slots enough for about urls URLs in all (at
// three in four used), in one block of huge pages, once per table: called
// when the table is projected to hold a run of urls URLs (see
// filterGate), so that its parts do not double their way there. Each
// doubling moved every URL of the part again, into Go memory on small
// pages faulted in with the part locked, while the other workers wanting
// it waited: on uniform 10M (4M distinct, a table sized ahead for 625,000)
// 14% of the samples were those moves and their faults, 9% the waiting
// workers' spinning and about 15% the Go scheduler's functions its
// Gosched calls ran. It does nothing when the block would not fit the
// limit.
func (t *aggTable) size(urls int64) {
	if t.sizing.Swap(true) {
		return
	}
	n := aggInitSlot
	for int64(n)*aggParts*3 < urls*4 {
		n *= 2
	}
	bytes := int64(n) * aggParts * aggSlotSize
	if t.bytes.Load()+bytes > t.limit {
		return
	}
	blk := hugemem.Alloc(int(bytes))
	all := unsafe.Slice((*aggSlot)(unsafe.Pointer(unsafe.SliceData(blk.Bytes()))), n*aggParts)
	t.bytes.Add(bytes)
	for i := range t.parts {
		p := &t.parts[i]
		p.mu.lock()
		if len(p.cur.Load().s) < n {
			p.moveTo(t, &aggSlots{s: all[i*n : (i+1)*n : (i+1)*n], shift: slotShift(n), first: true})
		}
		p.mu.unlock()
	}
	t.sized = blk
}

// hash spreads fp (scaled to 64 bits) over the parts and slots.
func (t *aggTable) hash(fp uint64) uint64 { return (fp << t.keyShift) * aggGolden }

func (t *aggTable) part(h uint64) *aggPart { return &t.parts[h>>(64-aggPartBits)] }

// home is the first slot of a hash.
func (s *aggSlots) home(h uint64) int { return int((h << aggPartBits) >> s.shift) }

// url is the copy at loc.
func (t *aggTable) url(loc uint64) string {
	n, k := binary.Uvarint(t.arena[loc:])
	b := t.arena[loc+uint64(k) : loc+uint64(k)+n]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// addr is the address of the copy at loc, for prefetch.Addrs.
func (t *aggTable) addr(loc uint64) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(t.arena))) + uintptr(loc)
}

// copyLines appends the address of each cache line that the copy at loc
// takes if it is a copy of an n-byte URL (the length of the row looked
// up: a copy of another URL may end elsewhere, and then only its
// compare misses), for prefetch.Addrs. A copy longer than a line is
// compared line by line, and a hint for its first line alone left the
// others to miss one after the other (crawlpad, 0-80 bytes longer URLs).
func (t *aggTable) copyLines(loc uint64, n int, out []uintptr) []uintptr {
	a := t.addr(loc)
	out = append(out, a)
	for l, end := a&^63+64, a+uintptr(uvarintLen(n)+n); l < end; l += 64 {
		out = append(out, l)
	}
	return out
}

// add records that node logged u, whose fingerprint is fp, read by
// worker w, and returns where u's copy is. ok is false when u is new and
// the table is at its limit (nothing was added).
func (t *aggTable) add(w int, fp uint64, node int, u string) (loc uint64, ok bool) {
	h := t.hash(fp)
	p := t.part(h)
	p.mu.lock()
	defer p.mu.unlock()
	ss := p.cur.Load()
	mask := len(ss.s) - 1
	for i := ss.home(h); ; i = (i + 1) & mask {
		s := &ss.s[i]
		if s.ref == 0 {
			loc, ok = t.store(w, u)
			if !ok {
				return 0, false
			}
			atomic.StoreUint64(&s.fp, fp)
			atomic.StoreUint64(&s.ref, loc<<16|1<<uint(node))
			p.used++
			if p.used*4 > len(ss.s)*3 {
				// Past the limit the part fills up to its last slot
				// but one; new URLs are refused by then.
				if t.bytes.Load() <= t.limit || p.used+1 >= len(ss.s) {
					grow := int64(len(ss.s)) * aggSlotSize
					if ss.first {
						// Its first slots stay in the block.
						grow *= 2
					}
					t.bytes.Add(grow)
					p.rehash(t, len(ss.s)*2)
				}
			}
			return loc, true
		}
		if s.fp == fp {
			if t.url(s.ref>>16) == u {
				if bit := uint64(1) << uint(node); s.ref&bit == 0 {
					atomic.StoreUint64(&s.ref, s.ref|bit)
				}
				return s.ref >> 16, true
			}
			p.collide(fp)
		}
	}
}

// spinLock is a part's lock. A part is held for one lookup, a few
// hundred nanoseconds, so a worker that finds it held waits for it
// rather than sleep: a sync.Mutex parked the waiter, and the wake-up
// (a system call and an interrupt between the cores) cost more than the
// wait.
type spinLock struct {
	v atomic.Uint32
	_ uint32
}

func (l *spinLock) lock() {
	for !l.v.CompareAndSwap(0, 1) {
		for i := 1; l.v.Load() != 0; i++ {
			if i%128 == 0 {
				// Held for long: its holder may have been descheduled.
				runtime.Gosched()
			}
		}
	}
}

func (l *spinLock) unlock() { l.v.Store(0) }

func (p *aggPart) collide(fp uint64) {
	if p.colliding == nil {
		p.colliding = map[uint64]struct{}{}
	}
	p.colliding[fp] = struct{}{}
}

// store copies u into worker w's arena.
func (t *aggTable) store(w int, u string) (uint64, bool) {
	if t.bytes.Load() > t.limit || len(u) >= aggMaxURL {
		return 0, false
	}
	c := &t.chunks[w]
	size := int64(uvarintLen(len(u)) + len(u))
	off := c.used
	// A copy starts on a new cache line when it would otherwise span one
	// line more than its length needs: a lookup compares the whole copy,
	// and a prefetch hint fetches its first line only.
	if (off+size-1)/64-off/64 > (size-1)/64 {
		off = (off + 63) &^ 63
	}
	if off+size > c.end {
		if !t.newChunk(w, size) {
			return 0, false
		}
		off = c.used // a chunk starts on a line
	}
	k := int64(binary.PutUvarint(t.arena[off:], uint64(len(u))))
	copy(t.arena[off+k:], u)
	c.urls.Add(1)
	c.copied.Add(off + size - c.used)
	c.used = off + size
	return uint64(off), true
}

// rehash moves part p's slots into n slots.
func (p *aggPart) rehash(t *aggTable, n int) { p.moveTo(t, newAggSlots(n)) }

// moveTo moves part p's slots into ns, empty and larger.
func (p *aggPart) moveTo(t *aggTable, ns *aggSlots) {
	old := p.cur.Load()
	mask := len(ns.s) - 1
	for _, s := range old.s {
		if s.ref == 0 {
			continue
		}
		i := ns.home(t.hash(s.fp))
		for ns.s[i].ref != 0 {
			i = (i + 1) & mask
		}
		ns.s[i] = s
	}
	p.cur.Store(ns)
}

// full reports whether the table has reached its limit.
func (t *aggTable) full() bool { return t.bytes.Load() > t.limit }

// slotAddrs appends the address of the home slot of each row's
// fingerprint (rows index fps), for prefetch.Addrs.
func (t *aggTable) slotAddrs(fps []uint64, rows []int32, out []uintptr) []uintptr {
	for _, i := range rows {
		h := t.hash(fps[i])
		ss := t.part(h).cur.Load()
		out = append(out, uintptr(unsafe.Pointer(&ss.s[ss.home(h)])))
	}
	return out
}

// urlAddrs appends, for each row whose fingerprint's home slot holds that
// fingerprint, the addresses of its copy (see copyLines), for
// prefetch.Addrs. b is the rows' batch.
func (t *aggTable) urlAddrs(b *tracefile.URLColumns, fps []uint64, rows []int32, out []uintptr) []uintptr {
	for _, i := range rows {
		fp := fps[i]
		h := t.hash(fp)
		ss := t.part(h).cur.Load()
		s := &ss.s[ss.home(h)]
		if ref := atomic.LoadUint64(&s.ref); ref != 0 && atomic.LoadUint64(&s.fp) == fp {
			out = t.copyLines(ref>>16, b.URLLen(int(i)), out)
		}
	}
	return out
}

// dump writes every URL of the table as spill records, one per node that
// logged it, into w, and empties the table. It returns the records
// written. The workers must be done with the table.
func (t *aggTable) dump(w *bucketWriter, rangeOf func(uint64) int) (int64, error) {
	defer t.release()
	var rec [10]byte
	var n int64
	for pi := range t.parts {
		p := &t.parts[pi]
		for _, s := range p.cur.Load().s {
			if s.ref == 0 {
				continue
			}
			u := t.url(s.ref >> 16)
			binary.LittleEndian.PutUint64(rec[:8], s.fp)
			for set := s.ref & 0xffff; set != 0; set &= set - 1 {
				binary.LittleEndian.PutUint16(rec[8:], uint16(bits.TrailingZeros64(set)))
				if err := w.write(rangeOf(s.fp), rec[:], u); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

// countAgg counts part part of the table as the reduce counts spill
// records: every slot is a distinct URL and, but for fingerprints found
// with different URLs, a distinct fingerprint; those are counted group by
// group, as countBuffer does. The workers must be done with the table.
func countAgg(t *aggTable, part int, res *partResult) {
	p := &t.parts[part]
	ss := p.cur.Load()
	for _, s := range ss.s {
		if s.ref == 0 {
			continue
		}
		if _, ok := p.colliding[s.fp]; ok {
			continue
		}
		res.total.DistinctFPs++
		res.total.DistinctURLs++
		for set := s.ref & 0xffff; set != 0; set &= set - 1 {
			c := res.node(bits.TrailingZeros64(set))
			c.DistinctFPs++
			c.DistinctURLs++
		}
	}
	mask := len(ss.s) - 1
	for fp := range p.colliding {
		var group []distinctURL
		var fpNodes []uint16
		// A fingerprint's slots are all in the run of full slots from its
		// home (there are no deletions).
		for i := ss.home(t.hash(fp)); ss.s[i].ref != 0; i = (i + 1) & mask {
			s := ss.s[i]
			if s.fp != fp {
				continue
			}
			d := distinctURL{u: []byte(t.url(s.ref >> 16))}
			for set := s.ref & 0xffff; set != 0; set &= set - 1 {
				n := uint16(bits.TrailingZeros64(set))
				d.nodes = append(d.nodes, n)
				if !hasNode(fpNodes, n) {
					fpNodes = append(fpNodes, n)
				}
			}
			group = append(group, d)
		}
		countGroup(res, fp, group, fpNodes)
	}
}

// recentURLs is the small table in front of an aggTable: the fingerprints
// of the URLs a worker read last on its current node, each with where its
// copy is in the aggTable's arena. A row whose fingerprint is there and
// whose string equals that copy (compared in full) is a repeat whose node
// is already in the copy's node set, so it needs no lookup in the large
// table; any other row goes to the aggTable. It is small enough to stay in
// cache, and is emptied when the worker moves to another node. Buckets of
// four entries, one cache line each; a new entry goes first and the last
// one leaves.
type recentURLs struct {
	buckets []recentBucket
	shift   uint
	mem     *hugemem.Block // the buckets' memory: one huge page
}

type recentBucket [4]struct{ fp, loc uint64 }

// recentBuckets is the size of a recentURLs (64 bytes each: 2 MiB). On
// the crawl-like 50M trace of docs/benchmarks.md, 2^13 buckets left 19.0M
// rows to the large table, 2^15 14.8M and 2^17 13.2M (of 50M); the time
// did not tell them apart on this machine.
const recentBuckets = 1 << 15

func newRecentURLs() *recentURLs {
	mem := hugemem.Alloc(recentBuckets * int(unsafe.Sizeof(recentBucket{})))
	b := unsafe.Slice((*recentBucket)(unsafe.Pointer(unsafe.SliceData(mem.Bytes()))), recentBuckets)
	return &recentURLs{buckets: b, shift: slotShift(recentBuckets), mem: mem}
}

func (r *recentURLs) bucket(fp uint64) *recentBucket {
	return &r.buckets[(fp*aggGolden)>>r.shift]
}

// seen reports whether u, with fingerprint fp, is a recent URL of t.
func (r *recentURLs) seen(t *aggTable, fp uint64, u string) bool {
	b := r.bucket(fp)
	for k := range b {
		if e := b[k]; e.loc != 0 && e.fp == fp && t.url(e.loc) == u {
			return true
		}
	}
	return false
}

// put records that fp's URL, of the current node, has its copy at loc.
func (r *recentURLs) put(fp, loc uint64) {
	b := r.bucket(fp)
	b[3], b[2], b[1] = b[2], b[1], b[0]
	b[0].fp, b[0].loc = fp, loc
}

func (r *recentURLs) clear() { clear(r.buckets) }

// free returns the table's memory; it is not used again.
func (r *recentURLs) free() {
	r.buckets = nil
	r.mem.Free()
}

// slotAddrs and urlAddrs are as firstSeen's: the bucket of each
// fingerprint, and the copy of a fingerprint its bucket holds, for
// prefetch.Addrs.
func (r *recentURLs) slotAddrs(fps []uint64, out []uintptr) []uintptr {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.buckets)))
	for _, fp := range fps {
		out = append(out, base+uintptr((fp*aggGolden)>>r.shift)*unsafe.Sizeof(recentBucket{}))
	}
	return out
}

// urlAddrs also sets cand[k] to the location its bucket holds for fps[k]
// (0: none), for seenAt. fps are those of b's rows from lo.
func (r *recentURLs) urlAddrs(t *aggTable, b *tracefile.URLColumns, lo int, fps, cand []uint64, out []uintptr) []uintptr {
	for k, fp := range fps {
		cand[k] = 0
		for _, e := range r.bucket(fp) {
			if e.loc != 0 && e.fp == fp {
				cand[k] = e.loc
				out = t.copyLines(e.loc, b.URLLen(lo+k), out)
				break
			}
		}
	}
	return out
}

// seenAt is seen, given cand, the location urlAddrs found for fp a block
// earlier: when u equals that copy it is a recent URL without a second
// look at its bucket (an entry leaves a bucket, but what it said stays
// true: its URL is in t with this node). Otherwise the bucket says.
func (r *recentURLs) seenAt(t *aggTable, cand, fp uint64, u string) bool {
	if cand != 0 && t.url(cand) == u {
		return true
	}
	return r.seen(t, fp, u)
}

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int { return (bits.Len64(uint64(n)|1) + 6) / 7 }

// recentGate decides, batch by batch, whether a worker counting in the
// aggTable looks at its recent-URL table first. The recent table pays only
// where most rows are recent repeats (on a crawl-like trace, three in
// four): a row it does not hold costs the lookups of its bucket and
// candidate copy on top of the large table's. On a trace whose repeats are
// of any earlier URL it drops few (it holds at most 131,072 of uniform
// 10M's 4M URLs), and its lookups were about a tenth of the CPU samples
// (docs/benchmarks.md, "Parts owned by one worker each"). So the gate
// watches the share of rows it drops over recentWindow rows, and below a
// quarter the worker leaves it aside for the next recentBypass rows, then
// watches again. Either way every row it does not drop is looked up in
// the large table: the counts are the same. Where the large table is not
// on course to hold the run either, the worker leaves the table at that
// verdict and spills (see mapper.spillFromNow).
type recentGate struct{ windowGate }

// recentWindow and recentBypass are rows of one worker (variables for
// tests).
var recentWindow, recentBypass int64 = 1 << 18, 4 << 20

func (g *recentGate) looking() bool { return g.open() }

// done counts a batch of rows, of which hits were dropped by the recent
// table.
func (g *recentGate) done(rows, hits int64) { g.count(rows, hits, recentWindow, recentBypass, 4) }
