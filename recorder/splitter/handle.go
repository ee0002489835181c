package splitter

import "github.com/crawltrace/crawltrace/recorder/peer"

// A splitter is driven by Run on a goroutine of its own, or by a driver
// that owns it and calls the methods of this file, never both. A
// deterministic crawl drives every node's splitter from its one
// goroutine: messages are processed in the order the driver hands them
// over, and batches for peers go to the transport after every message,
// as Run sends them when its channel is empty.

// Handle processes m on the caller's goroutine and returns when it is
// done. Run must not be running.
func (s *Splitter) Handle(m *Msg) {
	s.tr.Add(1)
	s.inflight.Add(1)
	s.handle(m)
}

// HandleBatch processes b, a batch from a peer, as Handle does.
func (s *Splitter) HandleBatch(b *peer.Batch) {
	s.Handle(&Msg{remote: b})
}

// Close ends a splitter driven by Handle, or one never started (a node
// that failed to start): batches being filled go to the transport, and
// the logs are closed. It returns their segments, as Stop does. Stop
// returns at once afterwards.
func (s *Splitter) Close() Segments {
	s.flushDue()
	s.flushPeers()
	s.closeLogs()
	s.publish()
	close(s.done)
	return s.segments()
}
