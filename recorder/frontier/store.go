package frontier

// The disk store: Mercator's back-end queues spilled to disk as BUbiNG's
// workbench virtualizer does. Each server's queue of URLs keeps a bounded
// head and tail in memory and its middle on disk, as chunks of URLs in a
// [Store] (schedule_spill.go).
//
// Format: a Store is a directory of log files, NNNNNN.chunks, appended to
// in turn (a new file once the current one passes 64 MiB). Each chunk is
//
//	uint32 little-endian payload length
//	payload: uvarint count, then count times
//	    uvarint URL length, URL bytes, float64 little-endian quality
//
// A [Chunk] (file, offset, length, count) locates one; the queues keep
// their chunks' locations in memory, 24 bytes per chunk. A file is removed
// once every chunk in it has been read back (the one appended to is
// truncated and reused instead). A Store is scratch space: a checkpoint
// saves the URLs themselves, and a Store's directory is emptied when it
// is opened.
//
// A Store is not safe for concurrent use; the frontier's lock guards it.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Item is one queued URL and its quality.
type Item struct {
	URL string
	Q   float64
}

// Chunk locates a chunk of items in a Store.
type Chunk struct {
	File  int32
	Count int32
	Off   int64
	Len   int64
}

// FileBytes is the size past which a Store starts a new log file.
const FileBytes = 64 << 20

// Store holds spilled chunks of URLs.
type Store struct {
	dir     string
	files   map[int32]*logFile
	cur     int32
	w       *bufio.Writer
	buf     []byte
	written int64 // bytes written, in total
	read    int64 // bytes read back, in total
	onDisk  int64 // bytes in live files
}

type logFile struct {
	f    *os.File
	size int64
	live int // chunks not yet consumed
}

// Open empties dir (made if needed) and returns a Store in it.
func Open(dir string) (*Store, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("frontier: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("frontier: %w", err)
	}
	s := &Store{dir: dir, files: map[int32]*logFile{}, cur: -1}
	return s, s.rotate()
}

func (s *Store) path(id int32) string {
	return filepath.Join(s.dir, fmt.Sprintf("%06d.chunks", id))
}

func (s *Store) rotate() error {
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("frontier: %w", err)
		}
		if lf := s.files[s.cur]; lf != nil && lf.live == 0 {
			s.remove(s.cur)
		}
	}
	s.cur++
	f, err := os.Create(s.path(s.cur))
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	s.files[s.cur] = &logFile{f: f}
	s.w = bufio.NewWriterSize(f, 256<<10)
	return nil
}

func (s *Store) remove(id int32) {
	lf := s.files[id]
	lf.f.Close()
	os.Remove(s.path(id))
	s.onDisk -= lf.size
	delete(s.files, id)
}

// Write appends items as one chunk.
func (s *Store) Write(items []Item) (Chunk, error) {
	b := s.buf[:0]
	b = binary.AppendUvarint(b, uint64(len(items)))
	for _, it := range items {
		b = binary.AppendUvarint(b, uint64(len(it.URL)))
		b = append(b, it.URL...)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(it.Q))
	}
	s.buf = b
	lf := s.files[s.cur]
	var hdr [4]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(b)))
	if _, err := s.w.Write(hdr[:]); err != nil {
		return Chunk{}, fmt.Errorf("frontier: %w", err)
	}
	if _, err := s.w.Write(b); err != nil {
		return Chunk{}, fmt.Errorf("frontier: %w", err)
	}
	c := Chunk{File: s.cur, Count: int32(len(items)), Off: lf.size + 4, Len: int64(len(b))}
	n := int64(4 + len(b))
	lf.size += n
	lf.live++
	s.written += n
	s.onDisk += n
	if lf.size >= FileBytes {
		if err := s.rotate(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Read returns the items of c, appended to dst, without consuming it.
func (s *Store) Read(c Chunk, dst []Item) ([]Item, error) {
	lf := s.files[c.File]
	if lf == nil {
		return dst, fmt.Errorf("frontier: chunk in file %d, which is gone", c.File)
	}
	if c.File == s.cur {
		if err := s.w.Flush(); err != nil {
			return dst, fmt.Errorf("frontier: %w", err)
		}
	}
	b := make([]byte, c.Len)
	if _, err := lf.f.ReadAt(b, c.Off); err != nil {
		return dst, fmt.Errorf("frontier: read %s: %w", s.path(c.File), err)
	}
	s.read += c.Len + 4
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(c.Count) {
		return dst, fmt.Errorf("frontier: %s: bad chunk at %d", s.path(c.File), c.Off)
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l+8 {
			return dst, fmt.Errorf("frontier: %s: bad chunk at %d", s.path(c.File), c.Off)
		}
		b = b[k:]
		u := string(b[:l])
		q := math.Float64frombits(binary.LittleEndian.Uint64(b[l:]))
		b = b[l+8:]
		dst = append(dst, Item{URL: u, Q: q})
	}
	return dst, nil
}

// Take reads c and consumes it: its file goes once all its chunks have.
func (s *Store) Take(c Chunk, dst []Item) ([]Item, error) {
	dst, err := s.Read(c, dst)
	if err != nil {
		return dst, err
	}
	lf := s.files[c.File]
	lf.live--
	switch {
	case lf.live > 0:
	case c.File != s.cur:
		s.remove(c.File)
	default:
		// The file appended to holds nothing live: start it again.
		if err := s.w.Flush(); err != nil {
			return dst, fmt.Errorf("frontier: %w", err)
		}
		if err := lf.f.Truncate(0); err != nil {
			return dst, fmt.Errorf("frontier: %w", err)
		}
		if _, err := lf.f.Seek(0, 0); err != nil {
			return dst, fmt.Errorf("frontier: %w", err)
		}
		s.w.Reset(lf.f)
		s.onDisk -= lf.size
		lf.size = 0
	}
	return dst, nil
}

// Stats are a Store's counters: bytes written and read back in total, and
// bytes in its files now.
type Stats struct {
	Written, Read, OnDisk int64
}

// Stats returns the counters.
func (s *Store) Stats() Stats { return Stats{Written: s.written, Read: s.read, OnDisk: s.onDisk} }

// Close closes and removes the Store's files.
func (s *Store) Close() error {
	for id := range s.files {
		s.remove(id)
	}
	return os.RemoveAll(s.dir)
}
