// Package arrowtest reads back the Arrow IPC files that tests write. It is
// a test helper: only _test.go files import it.
package arrowtest

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FirstBatch opens the Arrow IPC file data with mem (nil: the reader's
// default allocator) and returns the reader and its first record batch,
// failing t if either cannot be read. The batch is the reader's: the
// caller closes the reader when done with both, and before checking mem
// for leaks.
func FirstBatch(t testing.TB, data []byte, mem memory.Allocator) (*ipc.FileReader, arrow.RecordBatch) {
	t.Helper()
	var opts []ipc.Option
	if mem != nil {
		opts = append(opts, ipc.WithAllocator(mem))
	}
	r, err := ipc.NewFileReader(bytes.NewReader(data), opts...)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.RecordBatch(0)
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	return r, rec
}
