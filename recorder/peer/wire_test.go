package peer

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// An outbox file acknowledged twice (its receiver restarted in between)
// keeps one ".rNNNNNNNNNN.acked" suffix, which loadOutbox parses.
func TestOutboxBase(t *testing.T) {
	p := "/x/" + OutboxName(2, 3, 4)
	once := fmt.Sprintf("%s.r%010d.acked", outboxBase(p), 5)
	twice := fmt.Sprintf("%s.r%010d.acked", outboxBase(once), 6)
	if outboxBase(p) != p || outboxBase(twice) != p || twice != p+".r0000000006.acked" {
		t.Errorf("base %q, once %q, twice %q", outboxBase(p), once, twice)
	}
}

func TestBatchWire(t *testing.T) {
	b := &Batch{From: 3, Epoch: 5, Seq: 42, URLs: []string{"http://a/", "http://b/x?y"}, Kinds: []string{"link", "redirect"}, Source: []uint64{7, 8}}
	var buf bytes.Buffer
	if err := EncodeBatch(&buf, b); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.From != 3 || got.Epoch != 5 || got.Seq != 42 || !slices.Equal(got.URLs, b.URLs) || !slices.Equal(got.Kinds, b.Kinds) || !slices.Equal(got.Source, b.Source) {
		t.Errorf("round trip: %+v", got)
	}
	if _, err := DecodeBatch(bytes.NewReader([]byte("not arrow"))); err == nil {
		t.Error("garbage decoded")
	}
}
