package warcout

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/countio"
)

// Suffix ends the name of every file of the series.
const Suffix = ".warc.gz"

// DirName is the node directory's subdirectory holding its WARC files.
const DirName = "warc"

// Options configure a [Writer]. The recorder builds them from its crawl
// configuration.
type Options struct {
	// Dir is where the files go (OutDir/node-NNN/warc).
	Dir string
	// Prefix starts every file name: CRAWLID-nodeNNN.
	Prefix string
	// MaxFileBytes is the size on disk past which the next exchange
	// starts a new file (default 1 GiB).
	MaxFileBytes int64
	// QueueBytes bounds the bytes of exchanges logged or being logged and
	// not yet written ([Writer.Reserve]); default 32 MiB.
	QueueBytes int64
	// Info is the warcinfo record's fields, in order, after those the
	// writer sets (software, format, filename).
	Info [][2]string
	// Software names the writer in warcinfo.
	Software string
	// OnError is called once with the first write error; the writer then
	// drops what it is given.
	OnError func(error)
}

// DefaultOptions returns the defaults documented on [Options].
func DefaultOptions() Options {
	return Options{MaxFileBytes: 1 << 30, QueueBytes: 32 << 20, Software: "crawltrace"}
}

// Exchange is one fetch as it is archived: a request and its response.
type Exchange struct {
	URL      string
	Time     time.Time // when the fetch started
	PageID   uint64    // the page log row's id (0: none)
	IP       string
	Request  []byte // head, ending in a blank line
	Response []byte // status line and fields, ending in a blank line
	Body     []byte
	// Truncated is WARC-Truncated: "" when the body is whole.
	Truncated string
	// Compressed says Body is compressed already (a content coding): its
	// record's gzip member is stored, not compressed again.
	Compressed bool
}

// Size is the bytes ex holds, what [Writer.Reserve] is asked for.
func (ex *Exchange) Size() int64 {
	return int64(len(ex.URL)+len(ex.Request)+len(ex.Response)+len(ex.Body)) + 256
}

// File is one file of the series and its size on disk.
type File struct {
	Name string
	Size int64
}

// State is what a checkpoint records of the series: every file, the last
// one the open one, with its size at the cut.
type State struct {
	Files []File
}

// Stats count what a writer wrote, over the crawl's runs when restored.
type Stats struct {
	Records   int64 // WARC records, warcinfo included
	Responses int64 // response records
	Bytes     int64 // bytes on disk, gzip members included
	Files     int64
}

// Writer writes a node's WARC series. Reserve, Add, Checkpoint and Stats
// are safe for concurrent use; Add must be called in the order pages are
// logged, from one goroutine at a time. Restore is called before the
// first Add.
type Writer struct {
	o      Options
	budget *bytebudget.Budget

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*Exchange
	busy    bool // the goroutine holds exchanges taken from queue
	closed  bool
	started bool
	err     error

	// Owned by the writing goroutine (or by the caller before Start and
	// after Close).
	files []File
	f     *os.File
	bw    *bufio.Writer
	gz    *gzip.Writer // level 1
	// gzStore writes small records' members stored (level 0).
	gzStore *gzip.Writer
	count   countio.Writer
	info    string // the open file's warcinfo record id
	head    head   // the record being written
	dig     digester
	ids     ids
	seq     int
	done    chan struct{}

	records, responses, bytes, nfiles atomic.Int64
}

// New makes a writer for the series in o.Dir; [Writer.Start] starts it.
func New(o Options) *Writer {
	d := DefaultOptions()
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = d.MaxFileBytes
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = d.QueueBytes
	}
	if o.Software == "" {
		o.Software = d.Software
	}
	w := &Writer{o: o, budget: bytebudget.New(o.QueueBytes), done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Restore makes the series what st records: the last listed file is cut
// back to its size, and files not listed are moved to discardDir (the
// cut-off tail too, as NAME.tail). A nil st (no checkpoint, or one
// taken without WARC) keeps no file. It returns how many bytes were
// moved aside.
func (w *Writer) Restore(st *State, discardDir string) (discarded int64, err error) {
	keep := map[string]int64{}
	var files []File
	if st != nil {
		files = st.Files
		for _, f := range files {
			keep[f.Name] = f.Size
		}
	}
	ents, err := os.ReadDir(w.o.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("warcout: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, Suffix) {
			continue
		}
		path := filepath.Join(w.o.Dir, name)
		fi, err := e.Info()
		if err != nil {
			return discarded, fmt.Errorf("warcout: %w", err)
		}
		size, ok := keep[name]
		switch {
		case !ok:
			if err := moveAside(path, discardDir, name); err != nil {
				return discarded, err
			}
			discarded += fi.Size()
		case fi.Size() > size:
			if err := cutTail(path, size, discardDir); err != nil {
				return discarded, err
			}
			discarded += fi.Size() - size
		case fi.Size() < size:
			return discarded, fmt.Errorf("warcout: %s is %d bytes, shorter than the %d its checkpoint recorded", path, fi.Size(), size)
		}
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(w.o.Dir, f.Name)); err != nil {
			return discarded, fmt.Errorf("warcout: a file the checkpoint recorded: %w", err)
		}
	}
	w.files = append([]File(nil), files...)
	w.seq = len(files)
	return discarded, nil
}

// setStats starts the counters from st (a resumed crawl's).
func (w *Writer) setStats(st Stats) {
	w.records.Store(st.Records)
	w.responses.Store(st.Responses)
	w.bytes.Store(st.Bytes)
	w.nfiles.Store(st.Files)
}

// Stats returns the counters.
func (w *Writer) Stats() Stats {
	return Stats{Records: w.records.Load(), Responses: w.responses.Load(), Bytes: w.bytes.Load(), Files: w.nfiles.Load()}
}

// QueueStats are the queue's byte budget's: the most bytes held at once
// and how many reservations waited.
func (w *Writer) QueueStats() (peak, waits int64) { return w.budget.Stats() }

func moveAside(path, discardDir, name string) error {
	if err := os.MkdirAll(discardDir, 0o755); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if err := os.Rename(path, filepath.Join(discardDir, name)); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	return nil
}

// cutTail copies what follows size in path to discardDir, then truncates
// path to size.
func cutTail(path string, size int64, discardDir string) error {
	if err := os.MkdirAll(discardDir, 0o755); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	defer f.Close()
	tail, err := os.Create(filepath.Join(discardDir, filepath.Base(path)+".tail"))
	if err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if _, err := io.Copy(tail, io.NewSectionReader(f, size, 1<<62)); err != nil {
		tail.Close()
		return fmt.Errorf("warcout: %w", err)
	}
	if err := tail.Close(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	return nil
}

// Start starts the writing goroutine.
func (w *Writer) Start() {
	w.mu.Lock()
	w.started = true
	w.mu.Unlock()
	go w.run()
}

// Reserve takes n bytes of the queue's budget for an exchange about to be
// logged, waiting while they do not fit; the writer gives them back once
// the exchange is written. It is how a slow disk slows the crawl instead
// of growing its memory.
func (w *Writer) Reserve(n int64) { w.budget.Acquire(n) }

// Add queues ex, whose bytes were reserved, to be written. It does not
// wait.
func (w *Writer) Add(ex *Exchange) {
	w.mu.Lock()
	if w.closed || w.err != nil {
		w.mu.Unlock()
		w.budget.Release(ex.Size())
		return
	}
	w.queue = append(w.queue, ex)
	w.mu.Unlock()
	w.cond.Broadcast()
}

// Checkpoint waits until every exchange added so far is written, syncs
// the open file and returns the series' state.
func (w *Writer) Checkpoint() (State, error) {
	w.mu.Lock()
	for w.started && !w.closed && w.err == nil && (len(w.queue) > 0 || w.busy) {
		w.cond.Wait()
	}
	err := w.err
	if err == nil && w.started && !w.closed {
		// The goroutine waits for work; ask it to sync.
		w.busy = true
		w.mu.Unlock()
		err = w.sync()
		w.mu.Lock()
		w.busy = false
		w.cond.Broadcast()
	}
	st := State{Files: append([]File(nil), w.files...)}
	w.mu.Unlock()
	return st, err
}

// Close writes what is queued, closes the open file and stops the
// goroutine.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.err
	}
	w.closed = true
	started := w.started
	w.mu.Unlock()
	w.cond.Broadcast()
	if started {
		<-w.done
	}
	err := w.closeFile()
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	err = w.err
	w.mu.Unlock()
	return err
}

func (w *Writer) run() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		for w.busy { // a checkpoint syncs the file
			w.cond.Wait()
		}
		if len(w.queue) == 0 && w.closed {
			w.mu.Unlock()
			return
		}
		batch := w.queue
		w.queue = nil
		w.busy = true
		failed := w.err != nil
		w.mu.Unlock()
		var err error
		for _, ex := range batch {
			if !failed && err == nil {
				err = w.write(ex)
			}
			w.budget.Release(ex.Size())
		}
		if !failed && err == nil && w.bw != nil {
			// What the batch wrote goes to the file (not synced) before
			// the goroutine waits for more: one write for the batch where
			// one per exchange cost 2.5% of a crawl's CPU time.
			if ferr := w.bw.Flush(); ferr != nil {
				err = fmt.Errorf("warcout: %w", ferr)
			}
		}
		w.mu.Lock()
		w.busy = false
		if err != nil && w.err == nil {
			w.err = err
			if w.o.OnError != nil {
				go w.o.OnError(err)
			}
		}
		w.mu.Unlock()
		w.cond.Broadcast()
	}
}
