package warcout

import (
	"bufio"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"
)

// recordOptions build every record: its fields are given whole (ids,
// lengths, digests), so the library's validation of each field and its
// parse of the block, which took a fifth of a crawl's CPU time on the
// demo's web, are left out; the tests read every record back with the
// library's strictest validation and with warcio. The block is kept in
// memory.
var recordOptions = []gowarc.WarcRecordOption{
	gowarc.WithNoValidation(),
	gowarc.WithBufferMaxMemBytes(1 << 30),
}

// digest is "sha1:" and the base32 of the sha1 of parts, the form CDX
// indexes and deduplication by digest expect.
func digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// PageIDField is the response record's field naming the page log row.
const PageIDField = "Crawltrace-Page-Id"

var marshaler = gowarc.NewMarshaler()

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

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
			w.count = countingWriter{w: f, n: last.Size}
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
	w.count = countingWriter{w: f}
	w.bw = bufio.NewWriterSize(&w.count, 256<<10)
	w.files = append(w.files, File{Name: name})
	w.nfiles.Add(1)
	rb := gowarc.NewRecordBuilder(gowarc.Warcinfo, recordOptions...)
	rb.AddWarcHeaderTime(gowarc.WarcDate, time.Now())
	rb.AddWarcHeader(gowarc.WarcFilename, name)
	rb.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationWarcFields)
	fields := append([][2]string{{"software", w.o.Software}, {"format", "WARC File Format 1.1"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}}, w.o.Info...)
	var block []byte
	for _, kv := range fields {
		block = append(block, kv[0]+": "+kv[1]+"\r\n"...)
	}
	rb.AddWarcHeader(gowarc.WarcBlockDigest, digest(block))
	rb.AddWarcHeaderInt64(gowarc.ContentLength, int64(len(block)))
	rb.Write(block)
	rec, _, err := rb.Build()
	if err != nil {
		return fmt.Errorf("warcout: warcinfo: %w", err)
	}
	w.info = "<" + rec.RecordId() + ">"
	return w.put(rec, len(block), false)
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

// put writes rec as one gzip member and closes it: stored when store is
// set or its block is under storeBelow bytes, else compressed at level 1.
func (w *Writer) put(rec gowarc.WarcRecord, blockSize int, store bool) error {
	defer rec.Close()
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
	if _, _, err := marshaler.Marshal(*gz, rec, 0); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	if err := (*gz).Close(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
	w.records.Add(1)
	w.bytes.Add(w.size() - before)
	return nil
}

// size is the open file's size once its buffer is written.
func (w *Writer) size() int64 { return w.count.n + int64(w.bw.Buffered()) }

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
	reqID, respID := newID(), newID()

	resp := gowarc.NewRecordBuilder(gowarc.Response, recordOptions...)
	resp.AddWarcHeader(gowarc.WarcRecordID, respID)
	resp.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	resp.AddWarcHeaderTime(gowarc.WarcDate, ex.Time)
	if ex.IP != "" {
		resp.AddWarcHeader(gowarc.WarcIPAddress, ex.IP)
	}
	resp.AddWarcHeader(gowarc.WarcWarcinfoID, w.info)
	resp.AddWarcHeader(gowarc.WarcConcurrentTo, reqID)
	resp.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationHttp+";msgtype=response")
	if ex.Truncated != "" {
		resp.AddWarcHeader(gowarc.WarcTruncated, ex.Truncated)
	}
	if ex.PageID != 0 {
		resp.AddWarcHeader(PageIDField, strconv.FormatUint(ex.PageID, 10))
	}
	resp.AddWarcHeader(gowarc.WarcBlockDigest, digest(ex.Response, ex.Body))
	resp.AddWarcHeader(gowarc.WarcPayloadDigest, digest(ex.Body))
	resp.AddWarcHeaderInt64(gowarc.ContentLength, int64(len(ex.Response)+len(ex.Body)))
	resp.Write(ex.Response)
	resp.Write(ex.Body)
	rec, _, err := resp.Build()
	if err != nil {
		return fmt.Errorf("warcout: response record of %s: %w", ex.URL, err)
	}
	if err := w.put(rec, len(ex.Response)+len(ex.Body), ex.Compressed); err != nil {
		return err
	}
	w.responses.Add(1)

	req := gowarc.NewRecordBuilder(gowarc.Request, recordOptions...)
	req.AddWarcHeader(gowarc.WarcRecordID, reqID)
	req.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	req.AddWarcHeaderTime(gowarc.WarcDate, ex.Time)
	req.AddWarcHeader(gowarc.WarcWarcinfoID, w.info)
	req.AddWarcHeader(gowarc.WarcConcurrentTo, respID)
	req.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationHttp+";msgtype=request")
	req.AddWarcHeader(gowarc.WarcBlockDigest, digest(ex.Request))
	req.AddWarcHeader(gowarc.WarcPayloadDigest, digest())
	req.AddWarcHeaderInt64(gowarc.ContentLength, int64(len(ex.Request)))
	req.Write(ex.Request)
	rec, _, err = req.Build()
	if err != nil {
		return fmt.Errorf("warcout: request record of %s: %w", ex.URL, err)
	}
	if err := w.put(rec, len(ex.Request), false); err != nil {
		return err
	}
	// Each exchange goes to the file as it is written (not synced): a
	// crash leaves what a process kill would, whole records and perhaps a
	// torn one after the last checkpoint, which a resume cuts.
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("warcout: %w", err)
	}
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
	w.files[len(w.files)-1].Size = w.count.n
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
