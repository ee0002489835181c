package tracefile

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// directWriter writes a file sequentially, past the page cache where the
// system allows it (O_DIRECT on Linux): what is written is gathered into
// aligned buffers, and a goroutine of its own writes each full buffer
// while the caller fills the next. A condensed trace is written once and
// read later, if at all, by another process, so caching it on the way out
// bought nothing and cost a copy into fresh page-cache pages: on
// crawl-like 50M rows (700 MB of traces) discarding the traces altogether
// took 0.3 s of 4 s off the run (docs/benchmarks.md, "Fresh memory").
//
// Where the file cannot be opened for direct I/O (a file system without
// it), or a direct write is refused, it writes through the page cache as
// before, asking the kernel to start writeback after each buffer. finish
// writes what is left (the last bytes are written through the page cache:
// direct I/O writes whole blocks only); the caller then syncs the file.
// The goroutine also syncs the data every directSyncEvery bytes, so that
// the caller's sync has little left to wait for.
type directWriter struct {
	f      *os.File
	direct bool
	buf    []byte // being filled; len(buf) is what it holds
	off    int64  // where buf goes in the file
	free   chan []byte
	bufs   int // buffers made so far
	size   int // each buffer's
	todo   chan directBlock
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error // the first write error
	closed bool
}

type directBlock struct {
	b   []byte
	off int64
}

const (
	// directAlign is the alignment of a direct write's memory, offset
	// and length: the logical block size of every common device, or a
	// multiple of it.
	directAlign = 4096
	// directBuf is the size of each buffer, and directBufs their most
	// per file: one is filled while the others are written. A buffer is
	// made only when the others are all waiting to be written (a trace
	// written as fast as it is made needs two).
	directBuf  = 1 << 20
	directBufs = 4
	// directSyncEvery is how much the goroutine writes between two
	// fdatasyncs of its own. Written directly, the traces still sat in
	// the cache below this machine's disk, and the one fsync of each
	// Close flushed them all at the end of a run: 240-440 ms on
	// crawl-like 50M, during which every other trace's last write waited
	// on that sync's journal commit. Synced as it goes, the closes took
	// 35-50 ms.
	directSyncEvery = 32 << 20
)

// minDirectBuf is the smallest buffer createDirect makes.
const minDirectBuf = 64 << 10

// createDirect creates (or truncates) the file at path for a directWriter
// with buffers of size bytes (rounded up to directAlign, at least
// minDirectBuf).
func createDirect(path string, size int) (*directWriter, error) {
	f, direct, err := openDirect(path)
	if err != nil {
		return nil, err
	}
	size = max(size, minDirectBuf) + directAlign - 1
	size -= size % directAlign
	w := &directWriter{f: f, direct: direct, free: make(chan []byte, directBufs), todo: make(chan directBlock, directBufs),
		buf: alignedBuf(size)[:0], bufs: 1, size: size}
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

// alignedBuf returns n bytes starting on a directAlign boundary.
func alignedBuf(n int) []byte {
	b := make([]byte, n+directAlign)
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (directAlign - 1))
	return b[skip : skip+n : skip+n]
}

// File is the file written.
func (w *directWriter) File() *os.File { return w.f }

func (w *directWriter) loop() {
	defer w.wg.Done()
	var unsynced int
	for blk := range w.todo {
		if w.failed() == nil {
			w.setErr(w.writeAt(blk.b, blk.off))
			unsynced += len(blk.b)
			if unsynced >= directSyncEvery {
				w.setErr(datasync(w.f))
				unsynced = 0
			}
		}
		w.free <- blk.b[:0]
	}
}

// writeAt writes b at off: directly while the file allows it, else
// through the page cache (for good, from the first refusal on).
func (w *directWriter) writeAt(b []byte, off int64) error {
	if w.direct {
		_, err := w.f.WriteAt(b, off)
		if err == nil || !directRefused(err) {
			return err
		}
		if err := clearDirect(w.f); err != nil {
			return err
		}
		w.direct = false
	}
	if _, err := w.f.WriteAt(b, off); err != nil {
		return err
	}
	startWriteback(w.f)
	return nil
}

func (w *directWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// setErr keeps err, if it is the first. A file error keeps only its
// cause: the caller names the trace, and the temporary file's name
// beside it said the same twice.
func (w *directWriter) setErr(err error) {
	if err == nil {
		return
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Write gathers p, handing each full buffer to the writing goroutine.
func (w *directWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errors.New("write after finish")
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p = p[k:]
		if len(w.buf) == cap(w.buf) {
			w.todo <- directBlock{w.buf, w.off}
			w.off += int64(len(w.buf))
			w.buf = w.nextBuf()
		}
	}
	return n, nil
}

// nextBuf returns an empty buffer: a free one, a new one while there
// are fewer than directBufs, or the first one freed.
func (w *directWriter) nextBuf() []byte {
	select {
	case b := <-w.free:
		return b[:0]
	default:
	}
	if w.bufs < directBufs {
		w.bufs++
		return alignedBuf(w.size)[:0]
	}
	return (<-w.free)[:0]
}

// finish writes what is gathered and waits for every write. The file
// stays open, for the caller to sync and close.
func (w *directWriter) finish() error {
	if w.closed {
		return w.failed()
	}
	w.closed = true
	whole := len(w.buf) &^ (directAlign - 1)
	if whole > 0 {
		w.todo <- directBlock{w.buf[:whole], w.off}
		w.off += int64(whole)
	}
	close(w.todo)
	w.wg.Wait()
	if err := w.failed(); err != nil {
		return err
	}
	tail := w.buf[whole:]
	if len(tail) == 0 {
		return nil
	}
	// The tail is shorter than a block: written through the page cache.
	if w.direct {
		if err := clearDirect(w.f); err != nil {
			return fmt.Errorf("direct I/O off: %w", err)
		}
		w.direct = false
	}
	if _, err := w.f.WriteAt(tail, w.off); err != nil {
		w.setErr(err)
		return w.failed()
	}
	return nil
}

// abort stops the writing goroutine, its writes discarded; the file stays
// open.
func (w *directWriter) abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.setErr(errors.New("aborted"))
	close(w.todo)
	w.wg.Wait()
}
