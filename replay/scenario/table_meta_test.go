package scenario

import (
	"io"
	"testing"

	"github.com/crawltrace/crawltrace/internal/progress"
)

// A question's parameters reach its tables' metadata with a progress sink
// set (the CLI always sets one; it is not JSON and must not hide the rest).
func TestRunMetaWithProgress(t *testing.T) {
	cfg := LocalityConfig{Common: Common{Progress: progress.NewSink(progress.Always, io.Discard, false)}}
	m := runMeta(t.TempDir(), cfg)
	if len(m.Params) == 0 {
		t.Fatal("no parameters recorded with a progress sink set")
	}
	if _, ok := m.Params["progress"]; ok {
		t.Errorf("progress recorded as a parameter: %v", m.Params)
	}
}
