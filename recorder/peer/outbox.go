package peer

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// The outbox holds every batch a node sent until its receiver's
// checkpoint covers it (see [HTTPTransport]). It is kept in memory, as the
// encoded bodies the senders post, and saved, all of it at once, as a
// part of the node's checkpoint ([OutboxPart]): a batch is durable where
// the URLs that made it are. A batch sent after the node's last
// checkpoint needs no copy on disk: a node killed after it resumes from
// that checkpoint, so its logs are cut back there and the pages whose
// links made the batch are fetched again, sending their links again.
//
// Beyond its share of memory the outbox spills bodies to append-only
// files in the outbox directory (spill-NNNNNN), one write a batch; they
// only relieve memory and are removed when the crawl stops or restarts.
// Until the checkpoint part existed, every batch had a file of its own
// there (OutboxName); a resume still loads those.

// outItem is one batch in the outbox.
type outItem struct {
	body  []byte   // the encoded batch, when held in memory
	spill spillRef // where the body is when spilled (spill.seg != nil)
	// acq: body's bytes were taken from the transport's shared budget.
	acq     bool
	epoch   uint64
	seq     uint64
	ackedBy uint64 // the receiver incarnation that acknowledged it
}

type spillRef struct {
	seg    *spillSeg
	off, n int64
}

type spillSeg struct {
	f    *os.File
	path string
	size int64
	live int // batches whose body is in it
}

// spillSegBytes is the size beyond which the outbox starts a new spill
// file; one is removed when none of its batches is held any more.
const spillSegBytes = 64 << 20

// outStore holds the outbox's bodies: in memory up to cap bytes (taken
// from mem, the transport's shared budget, when set), spilled beyond.
// It is safe for concurrent use.
type outStore struct {
	dir  string
	cap  int64
	mem  *bytebudget.Budget
	used atomic.Int64
	logf func(format string, args ...any)

	mu      sync.Mutex
	cur     *spillSeg
	segs    map[*spillSeg]bool
	nextSeg int
	spilled atomic.Uint64
}

func newOutStore(dir string, cap int64, mem *bytebudget.Budget, logf func(string, ...any)) *outStore {
	return &outStore{dir: dir, cap: cap, mem: mem, logf: logf, segs: map[*spillSeg]bool{}}
}

// hold gives it the body b: in memory while the outbox's share allows,
// spilled otherwise (in memory too, should the spill fail).
func (s *outStore) hold(it *outItem, b []byte) {
	n := int64(len(b))
	if s.used.Load()+n <= s.cap && s.mem.TryAcquire(n) {
		s.used.Add(n)
		it.body, it.acq = b, true
		return
	}
	ref, err := s.spillBody(b)
	if err != nil {
		s.logf("outbox: %v (batch kept in memory)", err)
		s.used.Add(n)
		it.body = b
		return
	}
	it.spill = ref
}

func (s *outStore) spillBody(b []byte) (spillRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.cur.size >= spillSegBytes {
		s.nextSeg++
		p := filepath.Join(s.dir, fmt.Sprintf("%s%06d", spillPrefix, s.nextSeg))
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return spillRef{}, err
		}
		s.closeIdle(s.cur)
		s.cur = &spillSeg{f: f, path: p}
		s.segs[s.cur] = true
	}
	seg := s.cur
	if _, err := seg.f.WriteAt(b, seg.size); err != nil {
		return spillRef{}, fmt.Errorf("%s: %w", seg.path, err)
	}
	ref := spillRef{seg: seg, off: seg.size, n: int64(len(b))}
	seg.size += ref.n
	seg.live++
	s.spilled.Add(1)
	return ref, nil
}

// closeIdle removes seg when no batch is in it and it is not the one
// being written. Called with s.mu held.
func (s *outStore) closeIdle(seg *spillSeg) {
	if seg == nil || seg.live > 0 || seg == s.cur {
		return
	}
	seg.f.Close()
	os.Remove(seg.path)
	delete(s.segs, seg)
}

// body is it's encoded batch.
func (s *outStore) body(it *outItem) ([]byte, error) {
	if it.spill.seg == nil {
		return it.body, nil
	}
	b := make([]byte, it.spill.n)
	if _, err := it.spill.seg.f.ReadAt(b, it.spill.off); err != nil {
		return nil, fmt.Errorf("outbox %s: %w", it.spill.seg.path, err)
	}
	return b, nil
}

// drop lets go of it's body.
func (s *outStore) drop(it *outItem) {
	if it.spill.seg != nil {
		s.mu.Lock()
		it.spill.seg.live--
		s.closeIdle(it.spill.seg)
		s.mu.Unlock()
		it.spill = spillRef{}
		return
	}
	n := int64(len(it.body))
	s.used.Add(-n)
	if it.acq {
		s.mem.Release(n)
	}
	it.body, it.acq = nil, false
}

// close removes every spill file.
func (s *outStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for seg := range s.segs {
		seg.f.Close()
		os.Remove(seg.path)
	}
	s.segs, s.cur = map[*spillSeg]bool{}, nil
}

// spillPrefix names the outbox's spill files.
const spillPrefix = "spill-"

// itemBatch is it's batch, decoded; nil (logged) when it cannot be.
func (t *HTTPTransport) itemBatch(it *outItem) *Batch {
	body, err := t.store.body(it)
	if err == nil {
		var b *Batch
		if b, err = DecodeBatch(bytes.NewReader(body)); err == nil {
			return b
		}
	}
	t.logf("outbox: batch e%d s%d: %v", it.epoch, it.seq, err)
	return nil
}

// OutboxPart is a node's outbox as a part of its checkpoint (its file is
// OutboxPartName): every batch sent before the checkpoint's cut that its
// receiver's checkpoint did not cover yet, acknowledged or not. Make it
// before the node's checkpoint is loaded, and give it to the transport
// (Options.Part): a resumed transport queues what it loaded.
type OutboxPart struct {
	t      *HTTPTransport
	loaded []savedItem
}

type savedItem struct {
	dest int
	it   *outItem
}

// OutboxPartName is the outbox part's file in a checkpoint.
const OutboxPartName = "outbox"

// outboxMagic opens an outbox part.
const outboxMagic = "crawltrace outbox 1\n"

// NewOutboxPart returns an empty outbox part.
func NewOutboxPart() *OutboxPart { return &OutboxPart{} }

// Name implements the checkpoint part interface.
func (*OutboxPart) Name() string { return OutboxPartName }

// Save writes every batch the outbox holds: for each, its receiver, id,
// the incarnation that acknowledged it (0: none) and its body. Call it at
// a checkpoint's cut (the node sends nothing meanwhile) or after the
// transport closed. A crawl that ended (every node agreed, nothing left
// to send) saves none.
func (p *OutboxPart) Save(w io.Writer) error {
	if _, err := io.WriteString(w, outboxMagic); err != nil {
		return err
	}
	t := p.t
	if t == nil {
		for _, s := range p.loaded {
			if err := writeSaved(w, s.dest, s.it, s.it.body); err != nil {
				return err
			}
		}
		return writeEnd(w, len(p.loaded))
	}
	if t.ended.Load() {
		return writeEnd(w, 0)
	}
	n := 0
	for dest, q := range t.queues {
		k, err := p.saveQueue(w, dest, q)
		if err != nil {
			return err
		}
		n += k
	}
	return writeEnd(w, n)
}

// outboxEnd, in place of a receiver, ends an outbox part; the number of
// batches follows.
const outboxEnd = 1 << 21

func writeEnd(w io.Writer, n int) error {
	var b [2 * binary.MaxVarintLen64]byte
	k := binary.PutUvarint(b[:], outboxEnd)
	k += binary.PutUvarint(b[k:], uint64(n))
	_, err := w.Write(b[:k])
	return err
}

func (p *OutboxPart) saveQueue(w io.Writer, dest int, q *peerQueue) (n int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, list := range [][]*outItem{q.items, q.acked} {
		for _, it := range list {
			body, err := p.t.store.body(it)
			if err != nil {
				return n, err
			}
			if err := writeSaved(w, dest, it, body); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

func writeSaved(w io.Writer, dest int, it *outItem, body []byte) error {
	var hdr [5 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(dest))
	n += binary.PutUvarint(hdr[n:], it.epoch)
	n += binary.PutUvarint(hdr[n:], it.seq)
	n += binary.PutUvarint(hdr[n:], it.ackedBy)
	n += binary.PutUvarint(hdr[n:], uint64(len(body)))
	if _, err := w.Write(hdr[:n]); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// maxSavedBody bounds one saved body (a batch is at most a few MiB; see
// MaxBatchBytes): a larger length is a damaged part.
const maxSavedBody = 1 << 30

// Len is the number of batches Load read (and the transport has not
// queued yet).
func (p *OutboxPart) Len() int { return len(p.loaded) }

// Load reads what Save wrote; the transport queues it (Options.Part,
// with Options.Resume).
func (p *OutboxPart) Load(r io.Reader) error {
	br := bufio.NewReader(r)
	magic := make([]byte, len(outboxMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != outboxMagic {
		return errors.New("not an outbox part")
	}
	p.loaded = nil
	for i := 0; ; i++ {
		dest, err := binary.ReadUvarint(br)
		if err == nil && dest == outboxEnd {
			var n uint64
			if n, err = binary.ReadUvarint(br); err == nil && n != uint64(i) {
				err = fmt.Errorf("%d batches, its end says %d", i, n)
			}
			if err == nil {
				if _, e := br.ReadByte(); e != io.EOF {
					err = errors.New("bytes after its end")
				}
			}
			if err != nil {
				return fmt.Errorf("outbox part: %w", err)
			}
			return nil
		}
		var f [4]uint64
		for j := 0; err == nil && j < len(f); j++ {
			f[j], err = binary.ReadUvarint(br)
		}
		if err == nil && (f[3] > maxSavedBody || dest > 1<<20) {
			err = fmt.Errorf("a length of %d bytes or a node id of %d", f[3], dest)
		}
		var body bytes.Buffer
		if err == nil {
			var n int64
			n, err = io.CopyN(&body, br, int64(f[3]))
			if err == nil && n != int64(f[3]) {
				err = io.ErrUnexpectedEOF
			}
		}
		if err == nil {
			err = tracefile.CheckStream(body.Bytes())
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("outbox batch %d: %w", i, err)
		}
		p.loaded = append(p.loaded, savedItem{dest: int(dest), it: &outItem{body: body.Bytes(), epoch: f[0], seq: f[1], ackedBy: f[2]}})
	}
}

// queueLoaded queues the batches a previous incarnation left: those in
// the checkpoint's outbox part, and those an older version of the
// recorder left in the outbox directory, one file each. Unacknowledged
// ones are resent at once, acknowledged ones kept for a new incarnation
// of their receiver. Spill files of the previous incarnation are removed.
func (t *HTTPTransport) queueLoaded(part *OutboxPart) error {
	type id struct {
		dest       int
		epoch, seq uint64
	}
	seen := map[id]bool{}
	add := func(dest int, it *outItem, body []byte) {
		k := id{dest, it.epoch, it.seq}
		if dest < 0 || dest >= len(t.queues) || dest == t.self || seen[k] {
			return
		}
		seen[k] = true
		t.store.hold(it, body)
		q := t.queues[dest]
		if it.ackedBy > 0 {
			q.acked = append(q.acked, it)
			return
		}
		q.items = append(q.items, it)
		t.loaded++
		t.tr.Add(1)
	}
	if part != nil {
		for _, s := range part.loaded {
			body := s.it.body
			s.it.body = nil
			add(s.dest, s.it, body)
		}
		part.loaded = nil
	}
	ents, err := os.ReadDir(t.outbox)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("recorder: outbox: %w", err)
	}
	for _, e := range ents {
		var dest int
		var epoch, seq, by uint64
		name := e.Name()
		path := filepath.Join(t.outbox, name)
		if n, _ := fmt.Sscanf(name, "to%03d-e%010d-s%012d.arrows.r%010d.acked", &dest, &epoch, &seq, &by); n == 4 && strings.HasSuffix(name, ".acked") {
		} else if n, _ := fmt.Sscanf(name, "to%03d-e%010d-s%012d.arrows", &dest, &epoch, &seq); n != 3 || !strings.HasSuffix(name, ".arrows") {
			// a spill file, or a temporary file of an interrupted write
			os.Remove(path)
			continue
		}
		body, err := os.ReadFile(path)
		if err == nil {
			err = tracefile.CheckStream(body)
		}
		if err != nil {
			t.logf("outbox %s: %v (skipped)", path, err)
			continue
		}
		add(dest, &outItem{epoch: epoch, seq: seq, ackedBy: by}, body)
	}
	for _, q := range t.queues {
		sortItems(q.items)
		sortItems(q.acked)
	}
	t.resent.Add(uint64(t.loaded))
	return nil
}

func sortItems(xs []*outItem) {
	slices.SortFunc(xs, func(a, b *outItem) int {
		if c := cmp.Compare(a.epoch, b.epoch); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

// OutboxHolds reports whether the outbox directory dir holds a batch not
// acknowledged, in a file of its own (as the recorder kept them before
// the outbox became a checkpoint part): any entry but an acknowledged
// batch or a spill file. A directory that does not exist holds none; one
// that cannot be read counts as holding one.
func OutboxHolds(dir string) bool {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".acked") && !strings.HasPrefix(e.Name(), spillPrefix) {
			return true
		}
	}
	return false
}

// OutboxName is the file of batch (epoch, seq) for dest in the outbox
// directory of an older recorder, which kept one file a batch; an
// acknowledged one was renamed with the receiver's incarnation and
// ".acked".
func OutboxName(dest int, epoch, seq uint64) string {
	return fmt.Sprintf("to%03d-e%010d-s%012d.arrows", dest, epoch, seq)
}
