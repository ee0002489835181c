package importer

// Heritrix crawl.log import.
//
// # What the trace means
//
// A crawl.log has one line per URI that Heritrix finished with (fetched,
// failed, or ruled out), in completion order. The raw trace models a
// distributed crawl whose host splitters saw those URIs: each URI is logged
// at the node that owns the page it was found on (the via URI, partitioned
// with [Sink.NodeOf]), or at node 0 when it has none (seeds), and dest is
// filled by the partitioner. Lines whose URI is not http(s) (dns:, whois:,
// ftp:) are counted in [Stats.Skipped]. Negative status codes (Heritrix's
// own: -5003 blocked by scope, -9998 robots.txt precluded, -61 prerequisite
// failed, ...) are kept: the URI entered the splitter regardless.
//
// Heritrix writes each URI once (its already-seen filter runs before the
// log), so an imported crawl.log carries no repeated URLs beyond those that
// differ in Heritrix's form but agree after crawltrace's normalization. A
// URL cache replayed over it measures that, not the repetition a host
// splitter sees; use WARC import to recover every link occurrence.
//
// Columns:
//
//	time    the log timestamp (first field)
//	kind    "seed" for hop path "-", "redirect" when the last hop is R, else "link"
//	tag     from the last hop letter: L "a", E "embed" (any embedded resource:
//	        Heritrix does not record the element), X "js" (speculative: found by
//	        scanning JavaScript or CSS text), P "prereq" (robots.txt and other
//	        prerequisites), I "inferred" (e.g. /favicon.ico), S "form",
//	        M "manifest"; null for seeds, redirects and unknown letters
//	source  a sequential id per distinct (normalized) via URI in this import,
//	        1-based in order of first appearance; 0 for no via. Heritrix logs
//	        no page ids, so ids are independent of fingerprints and stable
//	        only within one import (all its files share the numbering)
//	worker  the thread number ("#042" is 42); 0 when absent
//
// Both Heritrix 1 and Heritrix 3 lines are read (they share the first
// twelve whitespace-separated fields; Heritrix 3 may append a JSON object).
// Gzip-compressed logs are read transparently. A first line that is not a
// log line (a header) is counted as skipped; any later line that does not
// parse is counted as bad with its line number.

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// HeritrixEntry is one parsed crawl.log line. Fields a line gives as "-"
// hold their zero value (Size -1). It is a plain value: safe to copy and
// to read concurrently.
type HeritrixEntry struct {
	Time          time.Time     // log time: when Heritrix finished with the URI
	Status        int           // HTTP status, or Heritrix's own code (1 for DNS, negative for failures)
	Size          int64         // content bytes; -1 for "-"
	URI           string        // as Heritrix logged it
	HopPath       string        // discovery path from a seed ("LLE"); "" for a seed
	Via           string        // the URI this one was found on; "" for a seed
	MIME          string        // content type as logged
	Thread        int           // the toe thread ("#042" is 42); -1 when absent
	FetchStart    time.Time     // when the fetch began; zero for "-"
	FetchDuration time.Duration // fetch duration; zero for "-"
	Digest        string        // content digest ("sha1:..."; bare base32 in Heritrix 1)
	SourceTag     string        // seed source tag
	Annotations   string        // comma-separated annotations
	Extra         string        // Heritrix 3's trailing JSON, raw; "" when absent
}

// Kind is the raw-trace kind of the entry: seed, link or redirect.
func (e *HeritrixEntry) Kind() string {
	switch {
	case e.HopPath == "":
		return tracefile.URLSeed
	case e.HopPath[len(e.HopPath)-1] == 'R':
		return tracefile.URLRedirect
	}
	return tracefile.URLLink
}

// Tag is the raw-trace tag of the entry, from its last hop (see the file
// documentation); "" means null.
func (e *HeritrixEntry) Tag() string {
	if e.HopPath == "" {
		return ""
	}
	switch e.HopPath[len(e.HopPath)-1] {
	case 'L':
		return "a"
	case 'E':
		return "embed"
	case 'X':
		return "js"
	case 'P':
		return "prereq"
	case 'I':
		return "inferred"
	case 'S':
		return "form"
	case 'M':
		return "manifest"
	}
	return ""
}

// errNotLogLine marks a line whose first field is not a timestamp.
var errNotLogLine = errors.New("first field is not a log timestamp")

// ParseHeritrixLine parses one crawl.log line of Heritrix 1 or 3. It needs
// at least the first six fields (time, status, size, URI, hop path, via).
func ParseHeritrixLine(line string) (HeritrixEntry, error) {
	var e HeritrixEntry
	f := strings.Fields(line)
	if len(f) == 0 {
		return e, errors.New("empty line")
	}
	t, err := parseHeritrixTime(f[0])
	if err != nil {
		return e, errNotLogLine
	}
	e.Time = t
	if len(f) < 6 {
		return e, fmt.Errorf("%d fields, want at least 6", len(f))
	}
	if e.Status, err = strconv.Atoi(f[1]); err != nil {
		return e, fmt.Errorf("status %q is not a number", f[1])
	}
	e.Size = -1
	if f[2] != "-" {
		if e.Size, err = strconv.ParseInt(f[2], 10, 64); err != nil || e.Size < 0 {
			return e, fmt.Errorf("size %q is not a number", f[2])
		}
	}
	e.URI = f[3]
	if f[4] != "-" {
		for i := 0; i < len(f[4]); i++ {
			if c := f[4][i]; c < 'A' || c > 'Z' {
				return e, fmt.Errorf("hop path %q is not upper-case letters", f[4])
			}
		}
		e.HopPath = f[4]
	}
	if f[5] != "-" {
		e.Via = f[5]
	}
	e.Thread = -1
	opt := func(i int) string {
		if i < len(f) && f[i] != "-" {
			return f[i]
		}
		return ""
	}
	e.MIME = opt(6)
	if th := opt(7); th != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(th, "#"))
		if th[0] != '#' || err != nil || n < 0 || n > 65535 {
			return e, fmt.Errorf("thread %q is not #number", th)
		}
		e.Thread = n
	}
	if ft := opt(8); ft != "" {
		start, dur, ok := strings.Cut(ft, "+")
		st, err := parseHeritrixTime(start)
		ms, derr := strconv.ParseInt(dur, 10, 64)
		if !ok || err != nil || derr != nil || ms < 0 {
			return e, fmt.Errorf("fetch time %q is not start+duration", ft)
		}
		e.FetchStart, e.FetchDuration = st, time.Duration(ms)*time.Millisecond
	}
	e.Digest = opt(9)
	e.SourceTag = opt(10)
	e.Annotations = opt(11)
	if len(f) > 12 {
		e.Extra = strings.Join(f[12:], " ")
	}
	return e, nil
}

// parseHeritrixTime parses the log's ISO 8601 timestamps
// ("2015-05-22T15:01:09.465Z") and the compact 17- or 14-digit form
// ("20150522150108890") of fetch times and old logs, all UTC.
func parseHeritrixTime(s string) (time.Time, error) {
	if len(s) > 0 && s[0] >= '0' && s[0] <= '9' && strings.IndexByte(s, '-') > 0 {
		return time.Parse(time.RFC3339Nano, s)
	}
	switch len(s) {
	case 14:
		return time.Parse("20060102150405", s)
	case 17:
		return time.Parse("20060102150405.000", s[:14]+"."+s[14:])
	}
	return time.Time{}, fmt.Errorf("bad time %q", s)
}

// Heritrix imports Heritrix crawl.log files (see the file documentation
// for what each column means). Files may be gzip-compressed; "-" is
// standard input.
func Heritrix(files []string, opts Options) (*Stats, error) {
	return importAll(files, opts, importHeritrixFile)
}

func importHeritrixFile(s *Sink, src *sources, path string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line int64
	seenLogLine := false
	for {
		text, tooLong, err := readLine(br, maxLineBytes)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if isCorrupt(err) {
				// A damaged gzip stream: keep what was read.
				s.BadLine(path, line+1, "unreadable from here on: "+err.Error())
				return nil
			}
			return fmt.Errorf("import: %s: line %d: %w", path, line+1, err)
		}
		line++
		if tooLong {
			s.BadLine(path, line, fmt.Sprintf("line longer than %d bytes", maxLineBytes))
			continue
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		e, err := ParseHeritrixLine(string(text))
		if err != nil {
			if !seenLogLine && errors.Is(err, errNotLogLine) {
				s.Stats.Skipped++ // a header line
				seenLogLine = true
				continue
			}
			s.BadLine(path, line, err.Error())
			continue
		}
		seenLogLine = true
		if !isHTTP(e.URI) {
			s.Stats.Skipped++
			continue
		}
		u, err := s.Normalize(e.URI)
		if err != nil {
			s.BadLine(path, line, err.Error())
			continue
		}
		node, source := 0, uint64(0)
		if e.Via != "" {
			node, source = src.of(s, e.Via)
		}
		rec := tracefile.URLRecord{
			Time:   e.Time.UnixNano(),
			URL:    u,
			Kind:   e.Kind(),
			Tag:    e.Tag(),
			Source: source,
		}
		if e.Thread > 0 {
			rec.Worker = uint16(e.Thread)
		}
		if err := s.Add(node, -1, rec); err != nil {
			return err
		}
	}
}

// maxLineBytes caps one crawl.log line; longer lines are counted as bad.
const maxLineBytes = 1 << 20

// readLine returns the next line without its line ending. A line longer
// than max is consumed and reported with tooLong. err is io.EOF only when
// no bytes remain.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			tooLong = true
		} else if len(buf) == 0 && err == nil {
			buf = chunk // common case: the whole line was in the buffer
		} else {
			buf = append(buf[:len(buf):len(buf)], chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(buf) == 0 && !tooLong {
				return nil, false, io.EOF
			}
		case err != nil:
			return nil, false, err
		}
		if tooLong {
			return nil, true, nil
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		return bytes.TrimSuffix(buf, []byte("\r")), false, nil
	}
}

// isCorrupt reports whether a read error means the (compressed) input is
// damaged or cut, rather than that reading failed.
func isCorrupt(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, gzip.ErrHeader) || errors.As(err, &ce)
}

// isHTTP reports whether u starts with an http or https scheme.
func isHTTP(u string) bool {
	i := strings.IndexByte(u, ':')
	if i < 0 {
		return false
	}
	scheme := strings.ToLower(u[:i])
	return scheme == "http" || scheme == "https"
}

// sources assigns the source column: a sequential id per distinct source
// page URL (in logged form) in one import, 1-based in order of first
// appearance, and remembers the node that owns the page. It holds every
// distinct source URL in memory (one entry per page with links). Not safe
// for concurrent use.
type sources struct {
	ids map[string]sourcePage
}

type sourcePage struct {
	id   uint64
	node int
}

func newSources() *sources { return &sources{ids: make(map[string]sourcePage)} }

// of returns the node and id of the source page raw (not yet normalized).
// A source that does not normalize keeps its raw form as key and is owned
// by node 0.
func (p *sources) of(s *Sink, raw string) (node int, id uint64) {
	key, err := s.Normalize(raw)
	if err != nil {
		return p.page(s, raw, false)
	}
	return p.page(s, key, true)
}

// page returns the node and id of the source page key; owned tells whether
// key is in logged form (else node 0 owns it).
func (p *sources) page(s *Sink, key string, owned bool) (node int, id uint64) {
	if sp, ok := p.ids[key]; ok {
		return sp.node, sp.id
	}
	sp := sourcePage{id: uint64(len(p.ids)) + 1}
	if owned {
		sp.node = s.NodeOf(key)
	}
	p.ids[key] = sp
	return sp.node, sp.id
}
