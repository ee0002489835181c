package splitter

import (
	"io"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/peer"
)

// TestDurableMarksAreTheCheckpoints: a receiver reports as durable the
// batch ids its last complete checkpoint saved, not what it processed
// since: a batch processed after the cut is lost if the receiver crashes,
// so its sender must keep it.
func TestDurableMarksAreTheCheckpoints(t *testing.T) {
	s := &Splitter{log: peer.NewBatchLog()}
	for q := uint64(1); q <= 3; q++ {
		s.log.Record(1, 2, q)
	}
	if m := s.durable.Load(); m != nil {
		t.Fatalf("durable before any checkpoint: %+v", *m)
	}
	if err := s.log.Save(io.Discard); err != nil {
		t.Fatal(err)
	}
	s.log.Record(1, 2, 4) // processed after the cut
	s.Checkpointed()      // the checkpoint holding seqs 1-3 is complete
	m := s.durable.Load()
	if m == nil || len(*m) != 1 || (*m)[0] != (peer.DurableMark{From: 1, Epoch: 2, Through: 3}) {
		t.Fatalf("durable after the checkpoint: %+v, want node 1 epoch 2 through 3", m)
	}
}
