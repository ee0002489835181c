package importer

// WARC import.
//
// # What the trace means
//
// A WARC file holds the pages a crawler fetched. The importer replays its
// link extraction: for every response record with an HTTP payload, in
// record order, it logs the URLs the crawltrace recorder would have sent to
// its host splitter after fetching that page, as the recorder does (minus
// its URL filter, which is a crawl setting):
//
//   - a 301, 302, 303, 307 or 308 response with a Location header: the
//     Location resolved against the record's WARC-Target-URI and
//     normalized, kind "redirect", null tag;
//   - a 200 response whose Content-Type is text/html or
//     application/xhtml+xml (or, without a Content-Type, whose body sniffs as
//     HTML): every link [extract.Extractor] finds in the body (dechunked,
//     decoded per Content-Encoding as the recorder decodes what it fetches:
//     gzip, deflate, br, stacked; capped at 16 MiB like the recorder's
//     default), in document order, duplicates included, kind
//     "link", tag the element name.
//
// Each URL is logged at the node that owns the page (the normalized
// WARC-Target-URI, partitioned with [Sink.NodeOf]); dest is filled by the
// partitioner. time is the record's WARC-Date, worker 0 and source a
// sequential id per distinct (normalized) page URL that logged a URL in
// this import, 1-based in order of the first URL logged (WARC record ids
// are not page ids, and fingerprints are not used so that ids do not depend
// on them; all files of one import share the numbering).
//
// warcinfo, request, metadata, resource, revisit and conversion records,
// responses for non-HTTP URIs (dns:) and responses whose Content-Type is
// not application/http are counted in [Stats.Skipped].
// A record that cannot be used (a bad header field, a bad HTTP head, an
// unsupported Content-Encoding such as compress) is counted as bad with its
// 1-based record number. When the framing itself is lost (no
// Content-Length, a block cut short by the end of the file, garbage where a
// record should start, a damaged gzip member) the record is counted as bad
// and the rest of that file is not read; what was imported before is kept,
// including the links in the part of a cut record that was read. A file whose gzip header does not parse is one bad record, number 1.
//
// The reader below is small and strict on framing (WARC/0.17 to WARC/1.1,
// header lines up to 64 KiB, a 1 MiB header, Content-Length required) and
// lenient on separators (any number of blank lines between records). It
// streams: only the current record's header is held in memory.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/extract"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// MaxBodyBytes caps the decoded body read from a WARC response for link
// extraction, like the recorder's default MaxBodyBytes.
const MaxBodyBytes = 16 << 20

// Limits of the WARC record header.
const (
	maxWARCHeaderLine  = 64 << 10
	maxWARCHeaderBytes = 1 << 20
)

// warcRecord is one WARC record: its header and its block, which is valid
// until the next call to warcReader.next.
type warcRecord struct {
	num     int64 // 1-based record number in the file
	version string
	fields  map[string]string // canonical (lower-case) name -> value; repeated fields keep the first
	length  int64
	block   *blockReader
	bad     string // a header problem that spares the framing: the record is to be counted as bad
}

// get returns a header field by its lower-case name.
func (r *warcRecord) get(name string) string { return r.fields[name] }

// targetURI is WARC-Target-URI without the angle brackets WARC/1.0
// examples put around it.
func (r *warcRecord) targetURI() string {
	u := strings.TrimSpace(r.get("warc-target-uri"))
	if len(u) >= 2 && u[0] == '<' && u[len(u)-1] == '>' {
		u = u[1 : len(u)-1]
	}
	return u
}

// date is the record's WARC-Date, zero when absent or malformed.
func (r *warcRecord) date() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.get("warc-date")))
	return t
}

// errFraming wraps errors after which the reader cannot find the next
// record.
var errFraming = errors.New("framing lost")

// warcReader reads the records of one (decompressed) WARC stream. Not safe
// for concurrent use.
type warcReader struct {
	br  *bufio.Reader
	num int64
	cur *warcRecord
}

func newWARCReader(r io.Reader) *warcReader {
	return &warcReader{br: bufio.NewReaderSize(r, maxWARCHeaderLine)}
}

// next returns the next record, io.EOF at a clean end, or an error
// wrapping errFraming (the record number is then w.num).
func (w *warcReader) next() (*warcRecord, error) {
	if w.cur != nil {
		_, err := io.Copy(io.Discard, w.cur.block)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: block cut short: %d of %d bytes", errFraming, w.cur.length-w.cur.block.n, w.cur.length)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errFraming, err)
		}
		w.cur = nil
	}
	// Skip the separator: any number of blank lines.
	var line []byte
	for {
		l, err := w.line()
		if err == io.EOF && len(l) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			w.num++
			return nil, fmt.Errorf("%w: %v", errFraming, err)
		}
		if len(bytes.TrimSpace(l)) > 0 {
			line = l
			break
		}
		if err == io.EOF {
			return nil, io.EOF
		}
	}
	w.num++
	rec := &warcRecord{num: w.num, fields: make(map[string]string, 16), length: -1}
	v := string(bytes.TrimSpace(line))
	if !strings.HasPrefix(v, "WARC/") {
		return nil, fmt.Errorf("%w: expected a WARC/ version line, got %q", errFraming, quoteStart(v))
	}
	rec.version = v
	var last string
	size := len(line)
	for {
		l, err := w.line()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%w: header: %v", errFraming, err)
		}
		if size += len(l); size > maxWARCHeaderBytes {
			return nil, fmt.Errorf("%w: header longer than %d bytes", errFraming, maxWARCHeaderBytes)
		}
		if len(l) == 0 {
			break
		}
		if l[0] == ' ' || l[0] == '\t' { // continuation line
			if last != "" {
				rec.fields[last] += " " + string(bytes.TrimSpace(l))
			}
			continue
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok || len(bytes.TrimSpace(name)) == 0 {
			if rec.bad == "" {
				rec.bad = fmt.Sprintf("header line %q is not Name: value", quoteStart(string(l)))
			}
			last = ""
			continue
		}
		last = strings.ToLower(string(bytes.TrimSpace(name)))
		if _, dup := rec.fields[last]; !dup {
			rec.fields[last] = string(bytes.TrimSpace(value))
		}
	}
	cl, ok := rec.fields["content-length"]
	if !ok {
		return nil, fmt.Errorf("%w: no Content-Length", errFraming)
	}
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: Content-Length %q is not a length", errFraming, quoteStart(cl))
	}
	rec.length = n
	rec.block = &blockReader{r: w.br, n: n}
	w.cur = rec
	return rec, nil
}

// blockReader reads a record block of known length. It reports a block cut
// short by the end of the stream as io.ErrUnexpectedEOF and remembers any
// failure, so that the record's consumers can leave the report to
// warcReader.next.
type blockReader struct {
	r      io.Reader
	n      int64 // bytes left
	failed bool
}

func (b *blockReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if err == io.EOF && b.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		b.failed = true
	}
	return n, err
}

// line reads one header line without its line ending. A line longer than
// the buffer is an error.
func (w *warcReader) line() ([]byte, error) {
	l, err := w.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("line longer than %d bytes", maxWARCHeaderLine)
	}
	l = bytes.TrimSuffix(l, []byte("\n"))
	return bytes.TrimSuffix(l, []byte("\r")), err
}

// quoteStart shortens s for an error message.
func quoteStart(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// WARC imports WARC files (WARC/0.17 to 1.1, plain or gzip-compressed
// record by record); see the file documentation for what is logged. "-" is
// standard input.
func WARC(files []string, opts Options) (*Stats, error) {
	ex := extract.NewExtractor()
	body := newBodyReader()
	return importAll(files, opts, func(s *Sink, src *sources, path string, r io.Reader) error {
		return readWARC(s, path, r, func(rec *warcRecord) error {
			if rec.get("warc-type") != "response" {
				s.Stats.Skipped++
				return nil
			}
			return importWARCResponse(s, src, ex, body, path, rec)
		})
	})
}

// readWARC calls f for every well-framed record of one file, counting bad
// records and stopping at lost framing (see the file documentation).
func readWARC(s *Sink, path string, r io.Reader, f func(*warcRecord) error) error {
	w := newWARCReader(r)
	for {
		rec, err := w.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.Is(err, errFraming) || isCorrupt(err) {
				s.BadLine(path, w.num, "record: "+err.Error()+"; rest of file not read")
				return nil
			}
			return fmt.Errorf("import: %s: record %d: %w", path, w.num, err)
		}
		if rec.bad != "" {
			s.BadLine(path, rec.num, "record: "+rec.bad)
			continue
		}
		if err := f(rec); err != nil {
			return err
		}
	}
}

// bodyReader holds the buffers reused across responses. Not safe for
// concurrent use.
type bodyReader struct {
	head  *bufio.Reader // over the record block
	sniff *bufio.Reader // over the decoded body
}

func newBodyReader() *bodyReader {
	return &bodyReader{head: bufio.NewReaderSize(nil, 32<<10), sniff: bufio.NewReaderSize(nil, 4<<10)}
}

// bufioOf returns r as a *bufio.Reader: b itself when r is b.
func bufioOf(r io.Reader, b *bufio.Reader) *bufio.Reader {
	if r == io.Reader(b) {
		return b
	}
	return bufio.NewReader(r)
}

// importWARCResponse logs the redirect or the links of one response record.
func importWARCResponse(s *Sink, src *sources, ex *extract.Extractor, br *bodyReader, path string, rec *warcRecord) error {
	target := rec.targetURI()
	if !isHTTP(target) {
		s.Stats.Skipped++
		return nil
	}
	if ct := strings.ToLower(rec.get("content-type")); ct != "" && !strings.HasPrefix(ct, "application/http") {
		s.Stats.Skipped++ // a response record without an HTTP message
		return nil
	}
	base, err := url.Parse(target)
	if err != nil {
		s.BadLine(path, rec.num, "WARC-Target-URI: "+err.Error())
		return nil
	}
	page, err := s.Normalize(target)
	if err != nil {
		s.BadLine(path, rec.num, "WARC-Target-URI: "+err.Error())
		return nil
	}
	br.head.Reset(rec.block)
	var head io.Reader = br.head
	// Recorders of HTTP/2 and HTTP/3 fetches write "HTTP/2 200"; net/http
	// only reads HTTP/1.x status lines, and the rest of the head is the same.
	if p, _ := br.head.Peek(7); len(p) == 7 && (string(p) == "HTTP/2 " || string(p) == "HTTP/3 ") {
		br.head.Discard(6)
		head = io.MultiReader(strings.NewReader("HTTP/1.1"), br.head)
	}
	resp, err := http.ReadResponse(bufioOf(head, br.head), nil)
	if err != nil {
		if !rec.block.failed { // else the reader reports the cut record
			s.BadLine(path, rec.num, "HTTP response: "+err.Error())
		}
		return nil
	}
	defer resp.Body.Close()
	var t int64 // 0: the Sink stamps the import time
	if d := rec.date(); !d.IsZero() {
		t = d.UnixNano()
	}
	add := func(u, kind, tag string) error {
		// The page gets its source id with its first logged URL.
		node, source := src.page(s, page, true)
		return s.Add(node, -1, tracefile.URLRecord{Time: t, URL: u, Kind: kind, Tag: tag, Source: source})
	}
	switch resp.StatusCode {
	case 301, 302, 303, 307, 308:
		if loc := resp.Header.Get("Location"); loc != "" {
			if u, err := urlnorm.Resolve(base, loc); err == nil {
				return add(u, tracefile.URLRedirect, "")
			}
		}
		return nil
	case 200:
	default:
		return nil
	}
	// Decoded as the recorder decodes what it fetches (gzip, deflate raw or
	// zlib-wrapped, br, stacked codings).
	body, err := extract.DecodeBody(resp.Header, resp.Body)
	if err != nil {
		if !rec.block.failed {
			s.BadLine(path, rec.num, err.Error()+"; links not extracted")
		}
		return nil
	}
	br.sniff.Reset(io.LimitReader(body, MaxBodyBytes))
	sniffed, _ := br.sniff.Peek(512)
	if !extract.IsHTML(resp.Header.Get("Content-Type"), sniffed) {
		return nil
	}
	var addErr error
	// A body cut short (a truncated record or a bad chunk) ends extraction
	// there, as a truncated fetch does in the recorder; the links before the
	// cut are kept.
	ex.ExtractFrom(br.sniff, page, resp.Header.Get("Content-Type"), func(l extract.Link) {
		if addErr == nil {
			addErr = add(l.URL, tracefile.URLLink, l.Tag)
		}
	})
	return addErr
}
