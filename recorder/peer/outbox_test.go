package peer

import (
	"os"
	"path/filepath"
	"testing"
)

// An outbox holds a batch until every file in it is an acknowledged one;
// a missing outbox holds none, an unreadable one counts as holding one.
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
	if OutboxHolds(dir) {
		t.Error("an outbox of acknowledged batches holds one not acknowledged")
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
