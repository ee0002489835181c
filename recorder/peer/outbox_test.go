package peer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An outbox directory of the older recorder holds a batch until every
// file in it is an acknowledged one or a spill file; a missing outbox
// holds none, an unreadable one counts as holding one.
func TestOutboxHolds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	if OutboxHolds(dir) {
		t.Error("a missing outbox holds a batch")
	}
	os.Mkdir(dir, 0o755)
	if OutboxHolds(dir) {
		t.Error("an empty outbox holds a batch")
	}
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch("to001-e0000000002-s000000000007.arrows.r0000000003.acked")
	touch(spillPrefix + "000001")
	if OutboxHolds(dir) {
		t.Error("an outbox of acknowledged batches and spill files holds one not acknowledged")
	}
	touch("to001-e0000000002-s000000000008.arrows")
	if !OutboxHolds(dir) {
		t.Error("an unacknowledged batch is not seen")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if !OutboxHolds(file) {
		t.Error("an outbox that cannot be read is taken as empty")
	}
}

// testOutbox is a transport of node 0 with two peers and only an
// outbox, holding memCap bytes in memory (0: every body spills).
func testOutbox(t *testing.T, memCap int64) *HTTPTransport {
	t.Helper()
	dir := t.TempDir()
	ht := &HTTPTransport{self: 0, outbox: dir, tr: NewTracker(), queues: []*peerQueue{{}, {}, {}},
		logf: func(f string, a ...any) { t.Logf(f, a...) }}
	ht.store = newOutStore(dir, memCap, nil, ht.logf)
	ht.epoch.Store(3)
	return ht
}

func testBatch(n int) *Batch {
	b := &Batch{}
	for i := range n {
		b.URLs = append(b.URLs, fmt.Sprintf("http://h%d.test/p%d", i%3, i))
		b.Kinds = append(b.Kinds, "link")
		b.Source = append(b.Source, uint64(i))
	}
	return b
}

// TestDurableMarksDeleteOutbox: once a receiver's status reports a batch
// durable (its checkpoint covers it), the sender lets it go: its memory
// is given back, and a spill file goes once none of its batches is left.
func TestDurableMarksDeleteOutbox(t *testing.T) {
	for _, memCap := range []int64{0, 1 << 20} {
		ht := testOutbox(t, memCap)
		for range 3 {
			ht.Send(1, testBatch(5))
		}
		q := ht.queues[1]
		q.acked, q.items = q.items, nil
		for _, it := range q.acked {
			it.ackedBy = 1
		}
		ht.forgetDurable(1, []DurableMark{{From: 0, Epoch: 3, Through: 2}, {From: 2, Epoch: 3, Through: 9}})
		if len(q.acked) != 1 || q.acked[0].seq != 3 {
			t.Fatalf("cap %d: kept %d batches", memCap, len(q.acked))
		}
		spills, _ := filepath.Glob(filepath.Join(ht.outbox, spillPrefix+"*"))
		if memCap == 0 && len(spills) != 1 || memCap > 0 && len(spills) != 0 {
			t.Errorf("cap %d: %d spill files", memCap, len(spills))
		}
		if b := ht.itemBatch(q.acked[0]); b == nil || b.Seq != 3 || len(b.URLs) != 5 {
			t.Errorf("cap %d: the batch kept reads back as %+v", memCap, b)
		}
		ht.forgetDurable(1, []DurableMark{{From: 0, Epoch: 3, Through: 3}})
		if used := ht.store.used.Load(); used != 0 {
			t.Errorf("cap %d: %d bytes held after every batch was durable", memCap, used)
		}
		// The segment being written stays until the outbox closes.
		ht.store.close()
		if spills, _ := filepath.Glob(filepath.Join(ht.outbox, spillPrefix+"*")); len(spills) != 0 {
			t.Errorf("cap %d: %d spill files after close", memCap, len(spills))
		}
	}
}

// TestOutboxPartRoundTrip: the outbox saved as a checkpoint part and
// loaded by a new incarnation queues the same batches, acknowledged ones
// kept for their receivers' restarts, whether their bodies were in
// memory or spilled; damaged parts are errors, never a panic.
func TestOutboxPartRoundTrip(t *testing.T) {
	ht := testOutbox(t, 2500) // a few bodies in memory, the rest spilled
	part := NewOutboxPart()
	part.t = ht
	for i := range 4 {
		ht.Send(1, testBatch(3+i))
		ht.Send(2, testBatch(7))
	}
	q := ht.queues[1]
	q.items[0].ackedBy = 5
	q.acked, q.items = q.items[:1], q.items[1:]
	if ht.store.spilled.Load() == 0 || ht.store.used.Load() == 0 {
		t.Fatalf("test needs bodies both in memory (%d bytes) and spilled (%d)", ht.store.used.Load(), ht.store.spilled.Load())
	}
	var buf bytes.Buffer
	if err := part.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.Bytes()

	loaded := NewOutboxPart()
	if err := loaded.Load(bytes.NewReader(saved)); err != nil {
		t.Fatal(err)
	}
	ht2 := testOutbox(t, 1<<20)
	ht2.epoch.Store(4)
	if err := ht2.queueLoaded(loaded); err != nil {
		t.Fatal(err)
	}
	if ht2.loaded != 7 || ht2.tr.Count() != 7 {
		t.Errorf("loaded %d unacknowledged batches (tracker %d), want 7", ht2.loaded, ht2.tr.Count())
	}
	ids := func(xs []*outItem) (out []string) {
		for _, it := range xs {
			b := ht2.itemBatch(it)
			out = append(out, fmt.Sprintf("e%d s%d by %d: %d URLs", it.epoch, it.seq, it.ackedBy, len(b.URLs)))
		}
		return out
	}
	if got, want := ids(ht2.queues[1].acked), []string{"e3 s1 by 5: 3 URLs"}; !slices.Equal(got, want) {
		t.Errorf("acknowledged for node 1: %q, want %q", got, want)
	}
	if got, want := ids(ht2.queues[1].items), []string{"e3 s2 by 0: 4 URLs", "e3 s3 by 0: 5 URLs", "e3 s4 by 0: 6 URLs"}; !slices.Equal(got, want) {
		t.Errorf("queued for node 1: %q, want %q", got, want)
	}
	if got := ids(ht2.queues[2].items); len(got) != 4 {
		t.Errorf("queued for node 2: %q", got)
	}

	// Every cut of the part, and flipped length bytes, fail cleanly.
	for n := range len(saved) {
		if err := NewOutboxPart().Load(bytes.NewReader(saved[:n])); err == nil {
			t.Errorf("a part cut to %d of %d bytes loaded", n, len(saved))
		}
	}
	bad := slices.Clone(saved)
	bad[len(outboxMagic)+4] = 0xff // the first body's length, made huge
	bad[len(outboxMagic)+5] = 0xff
	if err := NewOutboxPart().Load(bytes.NewReader(bad)); err == nil {
		t.Error("a part with a wrong length loaded")
	}
}
