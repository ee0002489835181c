package peer

import (
	"encoding/json"
	"io"
	"slices"
	"sync/atomic"
)

// batchKey is a sending incarnation: node From in its epoch Epoch.
type batchKey struct {
	From  int
	Epoch uint64
}

// seqSet is a set of batch sequence numbers: every seq <= low, plus above.
// Senders send a destination's batches in order, so above stays small.
type seqSet struct {
	low   uint64
	above map[uint64]struct{}
}

func (s *seqSet) has(q uint64) bool {
	if q <= s.low {
		return true
	}
	_, ok := s.above[q]
	return ok
}

func (s *seqSet) add(q uint64) {
	if s.has(q) {
		return
	}
	if s.above == nil {
		s.above = make(map[uint64]struct{})
	}
	s.above[q] = struct{}{}
	for {
		if _, ok := s.above[s.low+1]; !ok {
			return
		}
		delete(s.above, s.low+1)
		s.low++
	}
}

// BatchLog is a receiver's record of the batch ids it processed (admitted
// into its DUE and frontier), per sending incarnation. The splitter owns
// it: a batch is checked and recorded on the goroutine that admits its
// URLs, so a batch is processed exactly once per (from, epoch, seq) even
// when a sender resends it after a lost acknowledgement or its own
// restart. It is one part of a node's checkpoint ([BatchLog.Save],
// [BatchLog.Load]): a receiver restored from a checkpoint knows what it
// had processed then.
// Not safe for concurrent use.
type BatchLog struct {
	m map[batchKey]*seqSet
	// saved holds the watermarks of the last checkpoint saved, published
	// as durable once that checkpoint is complete ([BatchLog.Saved]).
	saved atomic.Pointer[[]DurableMark]
}

// NewBatchLog returns an empty batch log.
func NewBatchLog() *BatchLog { return &BatchLog{m: make(map[batchKey]*seqSet)} }

// Seen reports whether id was processed.
func (l *BatchLog) Seen(from int, epoch, seq uint64) bool {
	s := l.m[batchKey{from, epoch}]
	return s != nil && s.has(seq)
}

// Record marks id processed.
func (l *BatchLog) Record(from int, epoch, seq uint64) {
	k := batchKey{from, epoch}
	s := l.m[k]
	if s == nil {
		s = &seqSet{}
		l.m[k] = s
	}
	s.add(seq)
}

// Through is the highest seq q of (from, epoch) such that every seq <= q
// was processed: the watermark a receiver reports as durable once its
// checkpoint covers it.
func (l *BatchLog) Through(from int, epoch uint64) uint64 {
	if s := l.m[batchKey{from, epoch}]; s != nil {
		return s.low
	}
	return 0
}

// batchLogEntry is one sending incarnation in a checkpoint.
type batchLogEntry struct {
	From    int      `json:"from"`
	Epoch   uint64   `json:"epoch"`
	Through uint64   `json:"through"`
	Above   []uint64 `json:"above,omitempty"`
}

// CheckpointName is the batch log's file in a node's checkpoint.
const CheckpointName = "batches.json"

// Save writes l as JSON (its checkpoint part) and keeps its watermarks,
// to be published by the node once that checkpoint is complete (Saved).
func (l *BatchLog) Save(w io.Writer) error {
	out := make([]batchLogEntry, 0, len(l.m))
	for k, s := range l.m {
		e := batchLogEntry{From: k.From, Epoch: k.Epoch, Through: s.low}
		for q := range s.above {
			e.Above = append(e.Above, q)
		}
		slices.Sort(e.Above)
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b batchLogEntry) int {
		if a.From != b.From {
			return a.From - b.From
		}
		if a.Epoch < b.Epoch {
			return -1
		}
		if a.Epoch > b.Epoch {
			return 1
		}
		return 0
	})
	if err := json.NewEncoder(w).Encode(out); err != nil {
		return err
	}
	m := l.Marks()
	l.saved.Store(&m)
	return nil
}

// Load replaces l with the log Save wrote.
func (l *BatchLog) Load(r io.Reader) error {
	var in []batchLogEntry
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return err
	}
	l.m = make(map[batchKey]*seqSet, len(in))
	for _, e := range in {
		s := &seqSet{low: e.Through}
		for _, q := range e.Above {
			s.add(q)
		}
		l.m[batchKey{e.From, e.Epoch}] = s
	}
	return nil
}

// DurableMark says that every batch of sending incarnation (From, Epoch)
// with seq <= Through is covered by the receiver's last checkpoint, so its
// sender may delete them from its outbox.
type DurableMark struct {
	From    int    `json:"from"`
	Epoch   uint64 `json:"epoch"`
	Through uint64 `json:"through"`
}

// Marks returns the watermarks of l, one per sending incarnation.
func (l *BatchLog) Marks() []DurableMark {
	out := make([]DurableMark, 0, len(l.m))
	for k, s := range l.m {
		if s.low > 0 {
			out = append(out, DurableMark{From: k.From, Epoch: k.Epoch, Through: s.low})
		}
	}
	return out
}

// Saved returns the watermarks of the last checkpoint saved (nil: none),
// safe to call from any goroutine: once that checkpoint is complete the
// node publishes them as durable.
func (l *BatchLog) Saved() *[]DurableMark { return l.saved.Load() }
