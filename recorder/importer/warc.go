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
// Records are read by github.com/nlnwa/gowarc/v3, the library the
// recorder writes WARC with (recorder/warcout), with its validation set to
// warn: it frames each record by its Content-Length, checks the end of
// record marker and the digests (a mismatch is a warning, not a bad
// record, as before), and gives the block back whole. What the library
// does not do as this importer did is kept here, in readWARC and
// peekHeader (about 90 lines of the 400 the hand-written reader had):
//
//   - the library skips bytes it does not recognize until it finds a
//     record; here only blank lines may separate records, and anything
//     else loses the framing;
//   - the library blanks a header field that fails its validation (a
//     WARC-Target-URI in angle brackets, as WARC/1.0 examples and wget
//     write it; a WARC-Date of another form) and reads header lines of any
//     length; so the header is parsed here from a peek before the library
//     reads it, with its limits (64 KiB a line, 1 MiB in all: beyond
//     either the framing is lost), and a line that is not "Name: value"
//     makes the record bad;
//   - the library takes a missing or unreadable Content-Length as 0;
//     here it loses the framing;
//   - a block cut short by the end of the file is a library warning (its
//     Content-Length against the bytes read); here it is the bad record
//     that ends the file, its links imported as far as they were read.
//
// The library buffers a block whole before it gives the record out: in
// memory up to 1 MiB, beyond that in a temporary file. Its validation
// (header fields, URLs, digests) makes an import about 3.5 times slower
// than the hand-written reader was (BenchmarkWARC: 18,700 records/s
// against 65,600). A panic of the library on a damaged file is caught
// and counted as lost framing.

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

	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/extract"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// MaxBodyBytes caps the decoded body read from a WARC response for link
// extraction, like the recorder's default MaxBodyBytes.
const MaxBodyBytes = 16 << 20

// Limits of the WARC record header, checked before the library reads it.
const (
	maxWARCHeaderLine  = 64 << 10
	maxWARCHeaderBytes = 1 << 20
)

// warcRecord is one WARC record: its header and its block, which is valid
// until the next record is read.
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

// blockReader reads a record's block. failed is set when the block was
// cut short, so that its consumers leave the report to readWARC.
type blockReader struct {
	r      io.Reader
	failed bool
}

func (b *blockReader) Read(p []byte) (int, error) { return b.r.Read(p) }

// quoteStart shortens s for an error message.
func quoteStart(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// warcOptions are the library's: every finding a warning, digests
// checked, blocks over 1 MiB buffered on disk.
var warcOptions = []gowarc.WarcRecordOption{
	gowarc.WithSyntaxErrorPolicy(gowarc.ErrWarn),
	gowarc.WithSpecViolationPolicy(gowarc.ErrWarn),
	gowarc.WithUnknownRecordTypePolicy(gowarc.ErrWarn),
	gowarc.WithBufferMaxMemBytes(1 << 20),
}

// sourceReader remembers the error its reader gave, so that a failed
// read is told from damaged input.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// unmarshal reads one record, a panic of the library counted as an error.
func unmarshal(u gowarc.Unmarshaler, br *bufio.Reader) (rec gowarc.WarcRecord, validation []error, err error) {
	defer func() {
		if p := recover(); p != nil {
			rec, err = nil, fmt.Errorf("the WARC reader failed: %v", p)
		}
	}()
	rec, _, validation, err = u.Unmarshal(br)
	return rec, validation, err
}

// skipBlank skips blank lines and reports whether a record follows:
// io.EOF at a clean end.
func skipBlank(br *bufio.Reader) error {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return br.UnreadByte()
	}
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
	src := &sourceReader{r: r}
	br := bufio.NewReaderSize(src, maxWARCHeaderBytes)
	u := gowarc.NewUnmarshaler(warcOptions...)
	var num int64
	lost := func(reason string) error {
		s.BadLine(path, num, "record: framing lost: "+reason+"; rest of file not read")
		return nil
	}
	for {
		err := skipBlank(br)
		if err == io.EOF {
			return nil
		}
		num++
		if err == nil {
			if p, _ := br.Peek(5); string(p) != "WARC/" {
				line, _ := br.Peek(60)
				line, _, _ = bytes.Cut(line, []byte("\n"))
				return lost(fmt.Sprintf("expected a WARC/ version line, got %q", quoteStart(string(bytes.TrimSpace(line)))))
			}
		}
		var w *warcRecord
		if err == nil {
			var stop string
			if w, stop = peekHeader(br, num); stop != "" {
				if src.err != nil && !isCorrupt(src.err) {
					return fmt.Errorf("import: %s: record %d: %w", path, num, src.err)
				}
				return lost(stop)
			}
		}
		var rec gowarc.WarcRecord
		var validation []error
		if err == nil {
			rec, validation, err = unmarshal(u, br)
		}
		if err != nil {
			if src.err != nil && !isCorrupt(src.err) {
				return fmt.Errorf("import: %s: record %d: %w", path, num, src.err)
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return lost(err.Error())
		}
		if stop := w.adapt(rec, validation); stop != "" {
			rec.Close()
			return lost(stop)
		}
		if w.bad != "" {
			s.BadLine(path, num, "record: "+w.bad)
			rec.Close()
			continue
		}
		err = f(w)
		rec.Close()
		if err != nil {
			return err
		}
		if w.block.failed {
			var cl *gowarc.ContentLengthError
			for _, v := range validation {
				if errors.As(v, &cl) {
					break
				}
			}
			return lost(fmt.Sprintf("block cut short: %d of %d bytes", cl.Actual, cl.Expected))
		}
	}
}

// peekHeader reads the header of the record starting at br without
// consuming it: the library blanks a field that fails its validation (a
// WARC-Target-URI in angle brackets, a malformed WARC-Date) and reads
// lines of any length, so the fields are taken, and the limits checked,
// here. stop says why the framing is lost.
func peekHeader(br *bufio.Reader, num int64) (w *warcRecord, stop string) {
	// Peeked a little at first, more only when the header is longer: a
	// peek of the whole buffer would move it for every record.
	for size := 4 << 10; ; size *= 4 {
		size = min(size, maxWARCHeaderBytes)
		buf, err := br.Peek(size)
		w, stop, more := parseHeader(buf, err, num, size == maxWARCHeaderBytes)
		if !more {
			return w, stop
		}
	}
}

// parseHeader parses the header at the start of buf, what a peek of
// br gave with err; more asks for a longer peek (not final).
func parseHeader(buf []byte, err error, num int64, final bool) (w *warcRecord, stop string, more bool) {
	w = &warcRecord{num: num, fields: make(map[string]string, 16), length: -1}
	var last string
	for first := true; ; first = false {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			if len(buf) >= maxWARCHeaderLine {
				return nil, fmt.Sprintf("header line longer than %d bytes", maxWARCHeaderLine), false
			}
			if err == nil || errors.Is(err, bufio.ErrBufferFull) {
				if !final {
					return nil, "", true
				}
				return nil, fmt.Sprintf("header longer than %d bytes", maxWARCHeaderBytes), false
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, "header: " + err.Error(), false
		}
		if i > maxWARCHeaderLine {
			return nil, fmt.Sprintf("header line longer than %d bytes", maxWARCHeaderLine), false
		}
		l := bytes.TrimSuffix(buf[:i], []byte("\r"))
		buf = buf[i+1:]
		switch {
		case first:
			w.version = string(bytes.TrimSpace(l))
			continue
		case len(l) == 0:
			return w, "", false
		case l[0] == ' ' || l[0] == '\t': // continuation line
			if last != "" {
				w.fields[last] += " " + string(bytes.TrimSpace(l))
			}
			continue
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok || len(bytes.TrimSpace(name)) == 0 {
			if w.bad == "" {
				w.bad = fmt.Sprintf("header line %q is not Name: value", quoteStart(string(l)))
			}
			last = ""
			continue
		}
		last = strings.ToLower(string(bytes.TrimSpace(name)))
		if _, dup := w.fields[last]; !dup {
			w.fields[last] = string(bytes.TrimSpace(value))
		}
	}
}

// adapt takes the block of rec, the record the library read whose header
// w holds, or says why the framing is lost (stop).
func (w *warcRecord) adapt(rec gowarc.WarcRecord, validation []error) (stop string) {
	cl, ok := w.fields["content-length"]
	if !ok {
		return "no Content-Length"
	}
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return fmt.Sprintf("Content-Length %q is not a length", quoteStart(cl))
	}
	w.length = n
	cut := false
	for _, v := range validation {
		var ce *gowarc.ContentLengthError
		if errors.As(v, &ce) {
			cut = true
		}
	}
	raw, err := rec.Block().RawBytes()
	if err != nil {
		return "block: " + err.Error()
	}
	w.block = &blockReader{r: raw, failed: cut}
	if cut {
		w.bad = ""
	}
	return ""
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

// targetPage normalizes target, the URI a record is of, to the page its
// links are logged from; when it cannot, the record is counted bad.
func (s *Sink) targetPage(path string, rec *warcRecord, target string) (string, bool) {
	page, err := s.Normalize(target)
	if err != nil {
		s.BadLine(path, rec.num, "WARC-Target-URI: "+err.Error())
		return "", false
	}
	return page, true
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
	page, ok := s.targetPage(path, rec, target)
	if !ok {
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
	defer body.Close()
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
