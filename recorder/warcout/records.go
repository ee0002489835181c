package warcout

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/crawltrace/crawltrace/internal/countio"
)

// PageIDField is the response record's field naming the page log row.
const PageIDField = "Crawltrace-Page-Id"

// fileName is the name of file number seq of the series.
func (w *Writer) fileName(seq int) string {
	return fmt.Sprintf("%s-%05d%s", w.o.Prefix, seq, Suffix)
}

// openFile continues the last file of the series (restored) or starts the
// next one with its warcinfo record.
func (w *Writer) openFile() error {
	if err := os.MkdirAll(w.o.Dir, 0o755); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if n := len(w.files); n > 0 && w.f == nil && w.files[n-1].Size < w.o.MaxFileBytes && w.info == "" {
		// Continue the restored open file: its warcinfo id is read back.
		last := w.files[n-1]
		id, err := readWarcinfoID(filepath.Join(w.o.Dir, last.Name))
		if err == nil && id != "" {
			f, err := os.OpenFile(filepath.Join(w.o.Dir, last.Name), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return fmt.Errorf("warcout: %w", err)
			}
			w.f, w.info = f, id
			w.count = countio.Writer{W: f, N: last.Size}
			w.bw = bufio.NewWriterSize(&w.count, 256<<10)
			return nil
		}
	}
	name := w.fileName(w.seq)
	f, err := os.OpenFile(filepath.Join(w.o.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	w.seq++
	w.f = f
	w.count = countio.Writer{W: f}
	w.bw = bufio.NewWriterSize(&w.count, 256<<10)
	w.files = append(w.files, File{Name: name})
	w.nfiles.Add(1)
	fields := append([][2]string{{"software", w.o.Software}, {"format", "WARC File Format 1.1"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}}, w.o.Info...)
	var block []byte
	for _, kv := range fields {
		block = append(block, kv[0]+": "+kv[1]+"\r\n"...)
	}
	id, err := w.ids.next()
	if err != nil {
		return err
	}
	h := &w.head
	h.reset("warcinfo")
	h.addTime("WARC-Date", time.Now())
	h.add("WARC-Filename", name)
	h.add("Content-Type", "application/warc-fields")
	h.addDigest("WARC-Block-Digest", w.dig.of(block))
	h.addUint("Content-Length", uint64(len(block)))
	h.add("WARC-Record-ID", id)
	w.info = id
	return w.put(h, false, block)
}

// readWarcinfoID reads the WARC-Record-ID of the first record of a file
// of the series, its warcinfo.
func readWarcinfoID(path string) (string, error) {
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithNoValidation())
	if err != nil {
		return "", err
	}
	defer r.Close()
	rec, err := r.Next()
	if err != nil {
		return "", err
	}
	defer rec.WarcRecord.Close()
	if rec.WarcRecord.Type() != gowarc.Warcinfo {
		return "", fmt.Errorf("warcout: %s does not begin with warcinfo", path)
	}
	return "<" + rec.WarcRecord.RecordId() + ">", nil
}

// storeBelow is the block size under which a record's gzip member is
// stored rather than compressed (a request record's, about 250 bytes):
// on the demo's web this took a tenth off the CPU time of a crawl with
// --warc and made its files 14% larger, the Huffman tables of a member
// that small costing more than the rest of its write.
const storeBelow = 512

// put writes the record of h and the block made of parts as one gzip
// member and closes it: stored when store is set or the block is under
// storeBelow bytes, else compressed at level 1.
func (w *Writer) put(h *head, store bool, parts ...[]byte) error {
	if h.err != nil {
		return h.err
	}
	blockSize := 0
	for _, p := range parts {
		blockSize += len(p)
	}
	before := w.size()
	level, gz := gzip.BestSpeed, &w.gz
	if store || blockSize < storeBelow {
		level, gz = gzip.NoCompression, &w.gzStore
	}
	if *gz == nil {
		z, err := gzip.NewWriterLevel(w.bw, level)
		if err != nil {
			return err
		}
		*gz = z
	} else {
		(*gz).Reset(w.bw)
	}
	z := *gz
	if _, err := z.Write(h.end()); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	for _, p := range parts {
		if _, err := z.Write(p); err != nil {
			return fmt.Errorf("warcout: %w", err)
		}
	}
	if _, err := z.Write(trailer); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	w.records.Add(1)
	w.bytes.Add(w.size() - before)
	return nil
}

// size is the open file's size once its buffer is written.
func (w *Writer) size() int64 { return w.count.N + int64(w.bw.Buffered()) }

// write writes ex's response and request records, rotating first if the
// open file is full.
func (w *Writer) write(ex *Exchange) error {
	if w.f != nil && w.size() >= w.o.MaxFileBytes {
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	if w.f == nil {
		if err := w.openFile(); err != nil {
			return err
		}
	}
	reqID, err := w.ids.next()
	if err != nil {
		return err
	}
	respID, err := w.ids.next()
	if err != nil {
		return err
	}

	h := &w.head
	h.reset("response")
	h.add("WARC-Record-ID", respID)
	h.add("WARC-Target-URI", ex.URL)
	h.addTime("WARC-Date", ex.Time)
	if ex.IP != "" {
		h.add("WARC-IP-Address", ex.IP)
	}
	h.add("WARC-Warcinfo-ID", w.info)
	h.add("WARC-Concurrent-To", reqID)
	h.add("Content-Type", "application/http;msgtype=response")
	if ex.Truncated != "" {
		h.add("WARC-Truncated", ex.Truncated)
	}
	if ex.PageID != 0 {
		h.addUint(PageIDField, ex.PageID)
	}
	h.addDigest("WARC-Block-Digest", w.dig.of(ex.Response, ex.Body))
	h.addDigest("WARC-Payload-Digest", w.dig.of(ex.Body))
	h.addUint("Content-Length", uint64(len(ex.Response)+len(ex.Body)))
	if err := w.put(h, ex.Compressed, ex.Response, ex.Body); err != nil {
		return err
	}
	w.responses.Add(1)

	h.reset("request")
	h.add("WARC-Record-ID", reqID)
	h.add("WARC-Target-URI", ex.URL)
	h.addTime("WARC-Date", ex.Time)
	h.add("WARC-Warcinfo-ID", w.info)
	h.add("WARC-Concurrent-To", respID)
	h.add("Content-Type", "application/http;msgtype=request")
	h.addDigest("WARC-Block-Digest", w.dig.of(ex.Request))
	h.addDigest("WARC-Payload-Digest", emptySum[:])
	h.addUint("Content-Length", uint64(len(ex.Request)))
	if err := w.put(h, false, ex.Request); err != nil {
		return err
	}
	// The buffer goes to the file once the batch of exchanges the
	// goroutine took is written (run), not synced: a crash leaves what a
	// process kill would, whole records and perhaps a torn one after the
	// last checkpoint, which a resume cuts.
	return nil
}

// sync writes the buffer out, syncs the open file and records its size.
func (w *Writer) sync() error {
	if w.f == nil {
		return nil
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	w.files[len(w.files)-1].Size = w.count.N
	return nil
}

// closeFile syncs and closes the open file, if any.
func (w *Writer) closeFile() error {
	if w.f == nil {
		return nil
	}
	err := w.sync()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("warcout: %w", cerr)
	}
	w.f, w.info = nil, ""
	return err
}
