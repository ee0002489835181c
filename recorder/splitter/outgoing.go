// Outgoing batches: URLs for other nodes fill one batch per peer, handed
// to the transport when full, aged, or all the work the node has left.

package splitter

import (
	"time"

	"github.com/crawltrace/crawltrace/recorder/peer"
)

func (s *Splitter) appendOut(dest int, u, kind string, source uint64) {
	b := s.out[dest]
	if b == nil {
		b = &peer.Batch{From: s.node}
		s.out[dest] = b
		if s.batchAge > 0 {
			s.hold(dest)
		}
	}
	b.URLs = append(b.URLs, u)
	b.Kinds = append(b.Kinds, kind)
	b.Source = append(b.Source, source)
	if s.outBytes == nil {
		s.outBytes = make([]int, len(s.out))
	}
	// A batch is closed at SplitterBatch URLs or peer.BatchSoftBytes of
	// them, whichever comes first: receivers refuse bodies past
	// maxBatchBytes.
	s.outBytes[dest] += len(u) + peer.WireURLOverhead
	if len(b.URLs) >= s.batchSize || s.outBytes[dest] >= peer.BatchSoftBytes {
		s.flushPeer(dest)
	}
}

func (s *Splitter) flushPeer(dest int) {
	b := s.out[dest]
	if b == nil || len(b.URLs) == 0 {
		return
	}
	held := s.clearOut(dest)
	if held {
		defer s.release()
	}
	s.seqs[dest]++
	b.Epoch, b.Seq = s.epoch, s.seqs[dest]
	s.stats.BatchesSent++
	s.stats.URLsSent += int64(len(b.URLs))
	s.transport.Send(dest, b)
}

func (s *Splitter) flushPeers() {
	for d := range s.out {
		s.flushPeer(d)
	}
}

// clearOut forgets the batch being filled for dest; held reports whether
// hold counted it, to be released once its URLs are elsewhere.
func (s *Splitter) clearOut(dest int) (held bool) {
	s.out[dest] = nil
	if s.outBytes != nil {
		s.outBytes[dest] = 0
	}
	if s.outSince != nil && !s.outSince[dest].IsZero() {
		s.outSince[dest] = time.Time{}
		return true
	}
	return false
}

// hold counts the batch for dest, begun now, as work until it is handed
// over (Options.BatchAge), and arms the age timer.
func (s *Splitter) hold(dest int) {
	if s.outSince == nil {
		s.outSince = make([]time.Time, len(s.out))
	}
	s.outSince[dest] = time.Now()
	s.held++
	s.tr.Add(1)
	s.inflight.Add(1)
	if s.ageTimer == nil {
		s.ageTimer = time.NewTimer(s.batchAge)
	}
}

// release ends what hold counted, once the batch is with the transport
// (which counts it from then on).
func (s *Splitter) release() {
	s.held--
	s.inflight.Add(-1)
	s.tr.Add(-1)
}

// flushAged hands over the batches filled for BatchAge or longer, and
// arms the timer for the oldest of the rest.
func (s *Splitter) flushAged() {
	now := time.Now()
	var next time.Time
	for d, since := range s.outSince {
		switch {
		case since.IsZero():
		case now.Sub(since) >= s.batchAge:
			s.flushPeer(d)
		case next.IsZero() || since.Before(next):
			next = since
		}
	}
	if !next.IsZero() {
		s.ageTimer = time.NewTimer(s.batchAge - now.Sub(next))
	}
}
