package peer

import (
	"bytes"
	"slices"
	"testing"
)

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
