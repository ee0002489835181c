// Package extract finds the URLs in an HTML page with the streaming
// golang.org/x/net/html tokenizer (no DOM is built), resolves them against
// the page URL and normalizes them with recorder/urlnorm. It is the
// crawler's link extractor: like Mercator's, it reports URLs from all tags
// that carry them, not only <a>.
//
// # Attributes
//
// Every occurrence of these attributes is reported, in document order,
// duplicates included; [Link.Tag] is the lower-case element name:
//
//	href        a, area, link, base
//	src         img, script, iframe, frame, embed, source, audio, video, track, input
//	srcset      img, source (every candidate URL; descriptors dropped)
//	action      form
//	formaction  button, input
//	data        object
//	cite        blockquote, q, del, ins
//	poster      video
//	background  body
//	content     meta with http-equiv="refresh" (Tag "meta-refresh")
//
// Tag and attribute names are matched case-insensitively and character
// references in values are decoded (both by the tokenizer). Markup inside
// comments and inside raw-text elements (script, style, textarea, title) is
// not parsed for links, as in a browser.
//
// The first <base href> that resolves changes the base against which all
// later URLs on the page are resolved; URLs before it are resolved against
// the page URL (a streaming extractor cannot look ahead; base belongs in
// <head>, before other URLs, so this rarely differs from a browser). Every
// base href is itself reported with Tag "base", since the trace counts URLs
// in all tags.
//
// An empty attribute value (href="") resolves to the base URL itself, as in
// a browser, and is reported. A meta refresh without a URL ("5") reports
// nothing. srcset is split as in the HTML standard: candidates are
// separated by commas that follow whitespace-separated URLs, so commas
// inside a URL ("a,b.jpg 2x") are kept, and trailing commas of a URL are
// removed. Meta refresh content is parsed as in the standard's shared
// declarative refresh steps ("5; url=/next", "0;URL='/x'", "3, /y").
//
// A value that does not resolve or normalize (javascript:, mailto:, data:,
// a malformed URL, a bad meta refresh) is not reported; it is counted in
// [Stats.Skipped].
//
// # Encodings
//
// A page is decoded to Unicode before it is tokenized, with the encoding
// the HTML standard's sniffing algorithm finds, as
// golang.org/x/net/html/charset does: a byte order mark (UTF-8,
// UTF-16BE, UTF-16LE); else the charset of the Content-Type header;
// else a <meta charset> or <meta http-equiv=content-type> in the first
// 1024 bytes (a declared UTF-16 there means UTF-8); else UTF-8 when those
// bytes hold valid non-ASCII UTF-8, and windows-1252 when they do not.
// Labels are the WHATWG Encoding Standard's ("latin1" and "iso-8859-1"
// mean windows-1252, "sjis" Shift_JIS). A declared label that is not an
// encoding is passed over, as in a browser; if no declared label is
// known, the page is read as windows-1252, a browser's default in most
// locales, and [Stats.UnknownCharset] is set. A <meta> past the first
// 1024 bytes is not honoured (a browser may reload the page for it). A
// UTF-8 page is tokenized as it is, without transcoding; other pages are
// decoded as they stream, in bounded memory: single-byte encodings
// (windows-1252, ISO-8859-x, KOI8-R, ...) by copying ASCII runs and
// looking other bytes up in x/text's code table, the others with
// golang.org/x/text's decoders.
//
// URLs are then parsed as the WHATWG URL parser does with the document's
// encoding: the path (and the fragment, which is dropped) as UTF-8, the
// host with IDNA, and the query in the page's encoding: on a windows-1252
// page "caf\xe9.html?q=\xe9t\xe9" is "/caf%C3%A9.html?q=%E9t%E9", on a
// Shift_JIS page "日本.html?q=日本" is "/%E6%97%A5%E6%9C%AC.html?q=%93%FA%96{"
// (bytes of the encoded query outside the URL standard's special-query
// percent-encode set, such as the trail byte 0x7B of 本, stay as they
// are). A character the page's encoding cannot represent is encoded as the
// HTML character reference "&#N;", percent-encoded ("%26%23N%3B"). A
// UTF-16 page encodes its query as UTF-8, the URL standard's output
// encoding for UTF-16. Every logged URL is ASCII. Encoders are x/text's,
// with the WHATWG Shift_JIS and EUC-JP substitutions for U+00A5, U+203E
// and U+2212 added; they differ from the Encoding Standard in rare corners
// (x/text's windows-1252 decodes 0x81, 0x8D, 0x8F, 0x90 and 0x9D as
// U+FFFD; its ISO-2022-JP encoder writes half-width katakana as JIS X
// 0201, has no Roman state for U+00A5 and U+203E, which become character
// references, and passes ESC, SO and SI through).
package extract

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/crawltrace/crawltrace/recorder/urlnorm"
	"golang.org/x/net/html"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// Link is one URL-bearing attribute occurrence.
type Link struct {
	URL string // absolute and normalized (urlnorm)
	Tag string // lower-case element name ("a", "img", "base", ...; "meta-refresh" for a meta refresh)
}

// Stats counts one page's URL-bearing attribute occurrences and says how
// the page was decoded.
type Stats struct {
	Links   int // URLs emitted, duplicates included
	Unique  int // distinct URLs emitted on this page
	Skipped int // values that did not resolve or normalize

	// Encoding is the WHATWG name of the encoding the page was read in
	// ("utf-8", "windows-1252", "shift_jis", "utf-16le", ...).
	Encoding string
	// UnknownCharset reports that the page declared a charset (in its
	// Content-Type or a <meta>) that is not an encoding, and no known
	// one: it was read as windows-1252.
	UnknownCharset bool
	// Transcoded reports that the page was decoded from an encoding
	// other than UTF-8 into different text than a UTF-8 reading gives:
	// its encoding is not ASCII-compatible (UTF-16, ISO-2022-JP,
	// replacement), or a byte outside ASCII was read. A pure-ASCII page
	// read as windows-1252 (no charset declared) is not transcoded.
	Transcoded bool
}

// Extractor extracts links from HTML pages. It is reusable and not safe for
// concurrent use (use one per worker); it keeps its buffers between pages.
type Extractor struct {
	seen map[string]struct{}
	br   *bufio.Reader // over the page, to look at its first bytes
	// query encodes the queries of references on a page whose URL query
	// encoding is not UTF-8; nil otherwise.
	query    *queryEncoder
	encoders map[string]*queryEncoder // by encoding name, made on first use
	single   singleByteReader         // decodes single-byte encodings
	high     highByteReader           // sees the bytes of other ASCII-compatible ones
	// Per-page state.
	pageBase *urlnorm.Base // page URL
	base     *urlnorm.Base // current base (page URL or <base href>)
	baseSet  bool          // a <base href> has taken effect
	emit     func(Link)
	stats    Stats
	srcset   []string
}

// NewExtractor returns an Extractor.
func NewExtractor() *Extractor {
	return &Extractor{seen: make(map[string]struct{}, 128), br: bufio.NewReaderSize(nil, 4096)}
}

// Extract reads an HTML document from r (the page was fetched from base,
// with the Content-Type header contentType, "" if none) and calls emit for
// every URL-bearing attribute occurrence in document order, duplicates
// included. The page is decoded as the package documentation (Encodings)
// says. It honors <base href>. Links that do not resolve or normalize
// (javascript:, mailto:, malformed) are counted, not emitted. A nil base
// allows only absolute URLs; a base that does not normalize is an error.
// The error is nil at the end of the input, else the read error; the
// stats then cover the part read. emit may be nil.
func (e *Extractor) Extract(r io.Reader, base *url.URL, contentType string, emit func(Link)) (Stats, error) {
	raw := ""
	if base != nil {
		raw = base.String()
	}
	return e.ExtractFrom(r, raw, contentType, emit)
}

// ExtractFrom is [Extractor.Extract] for a page URL given as the crawler
// holds it (normalized, "" for none). Prefer it to Extract: net/url
// escapes again, in String, characters the URL standard keeps in a path
// ("|", "^"), so relative links of a page at http://a/x|y/ would resolve
// under http://a/x%7Cy/, another URL.
func (e *Extractor) ExtractFrom(r io.Reader, base string, contentType string, emit func(Link)) (Stats, error) {
	clear(e.seen)
	e.stats = Stats{}
	e.emit = emit
	e.pageBase, e.base, e.baseSet = nil, nil, false
	e.query = nil
	defer func() { e.emit = nil }()
	if base != "" {
		b, err := urlnorm.NewBase(base)
		if err != nil {
			return Stats{}, fmt.Errorf("extract: page URL: %w", err)
		}
		e.pageBase, e.base = b, b
	}

	// Look at the first bytes for the encoding: through r's own buffer
	// when it has one large enough, else through e.br.
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < prescanLen {
		e.br.Reset(r)
		br = e.br
		defer e.br.Reset(nil)
	}
	head, peekErr := br.Peek(prescanLen)
	pe := sniffEncoding(head, contentType)
	e.stats.Encoding, e.stats.UnknownCharset = pe.name, pe.unknown
	br.Discard(pe.bom)
	src := io.Reader(br)
	if peekErr != nil {
		// The page ended (or failed) within its first bytes, all in br:
		// read them, then end with the error, without asking r again.
		src = io.MultiReader(io.LimitReader(br, int64(len(head)-pe.bom)), errReader{peekErr})
	}
	// highRead reports whether a byte outside ASCII was read (nil: the
	// page is not transcoded, or always is).
	var highRead *bool
	if pe.enc != nil {
		if cm, ok := pe.enc.(*charmap.Charmap); ok && asciiCompatible(cm) {
			e.single.reset(src, cm)
			src, highRead = &e.single, &e.single.high
			defer e.single.reset(nil, nil)
		} else if asciiCompatibleName(pe.name) {
			e.high.reset(src)
			src, highRead = transform.NewReader(&e.high, pe.enc.NewDecoder()), &e.high.high
			defer e.high.reset(nil)
		} else {
			e.stats.Transcoded = true
			src = transform.NewReader(src, pe.enc.NewDecoder())
		}
		e.query = e.queryEncoder(pe)
	}

	z := html.NewTokenizer(src)
	for {
		switch z.Next() {
		case html.ErrorToken:
			e.stats.Unique = len(e.seen)
			if highRead != nil {
				e.stats.Transcoded = *highRead
			}
			if err := z.Err(); !errors.Is(err, io.EOF) {
				return e.stats, fmt.Errorf("extract: %w", err)
			}
			return e.stats, nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if hasAttr {
				e.tag(z, name)
			}
		}
	}
}

// errReader returns its error.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// queryEncoder returns the query encoder of a page in encoding pe, nil
// when its URL query encoding is UTF-8 (UTF-16 and the replacement
// encoding use UTF-8 for URLs).
func (e *Extractor) queryEncoder(pe pageEncoding) *queryEncoder {
	switch pe.name {
	case "utf-8", "utf-16be", "utf-16le", "replacement":
		return nil
	}
	q := e.encoders[pe.name]
	if q == nil {
		if e.encoders == nil {
			e.encoders = make(map[string]*queryEncoder)
		}
		q = &queryEncoder{name: pe.name, t: pe.enc.NewEncoder().Transformer}
		e.encoders[pe.name] = q
	}
	return q
}

// tag handles the attributes of a start tag.
func (e *Extractor) tag(z *html.Tokenizer, name []byte) {
	var tag string
	switch string(name) { // no allocation: the compiler interns the switch
	case "a":
		tag = "a"
	case "area":
		tag = "area"
	case "link":
		tag = "link"
	case "base":
		tag = "base"
	case "img":
		tag = "img"
	case "script":
		tag = "script"
	case "iframe":
		tag = "iframe"
	case "frame":
		tag = "frame"
	case "embed":
		tag = "embed"
	case "source":
		tag = "source"
	case "audio":
		tag = "audio"
	case "video":
		tag = "video"
	case "track":
		tag = "track"
	case "input":
		tag = "input"
	case "form":
		tag = "form"
	case "button":
		tag = "button"
	case "object":
		tag = "object"
	case "blockquote":
		tag = "blockquote"
	case "q":
		tag = "q"
	case "del":
		tag = "del"
	case "ins":
		tag = "ins"
	case "body":
		tag = "body"
	case "meta":
		e.meta(z)
		return
	default:
		return
	}
	for more := true; more; {
		var key, val []byte
		key, val, more = z.TagAttr()
		switch attrKind(tag, string(key)) {
		case kindURL:
			if tag == "base" {
				e.baseHref(string(val))
			} else {
				e.add(tag, string(val))
			}
		case kindSrcset:
			e.srcset = splitSrcset(e.srcset[:0], val)
			for _, u := range e.srcset {
				e.add(tag, u)
			}
		}
	}
}

const (
	kindNone = iota
	kindURL
	kindSrcset
)

// attrKind reports whether attribute key of element tag holds a URL.
func attrKind(tag, key string) int {
	switch key {
	case "href":
		switch tag {
		case "a", "area", "link", "base":
			return kindURL
		}
	case "src":
		switch tag {
		case "img", "script", "iframe", "frame", "embed", "source", "audio", "video", "track", "input":
			return kindURL
		}
	case "srcset":
		if tag == "img" || tag == "source" {
			return kindSrcset
		}
	case "action":
		if tag == "form" {
			return kindURL
		}
	case "formaction":
		if tag == "button" || tag == "input" {
			return kindURL
		}
	case "data":
		if tag == "object" {
			return kindURL
		}
	case "cite":
		switch tag {
		case "blockquote", "q", "del", "ins":
			return kindURL
		}
	case "poster":
		if tag == "video" {
			return kindURL
		}
	case "background":
		if tag == "body" {
			return kindURL
		}
	}
	return kindNone
}

// resolve resolves ref (its query re-encoded as the page's charset asks)
// against base, or normalizes it where there is none; a reference that
// does not resolve is counted as skipped.
func (e *Extractor) resolve(base *urlnorm.Base, ref string) (string, bool) {
	if e.query != nil {
		ref = e.query.encode(ref)
	}
	var u string
	var err error
	if base != nil {
		u, err = base.Resolve(ref)
	} else {
		u, err = urlnorm.Normalize(ref)
	}
	if err != nil {
		e.stats.Skipped++
		return "", false
	}
	return u, true
}

// add resolves ref and emits it, or counts it as skipped.
func (e *Extractor) add(tag, ref string) {
	u, ok := e.resolve(e.base, ref)
	if !ok {
		return
	}
	e.stats.Links++
	e.seen[u] = struct{}{}
	if e.emit != nil {
		e.emit(Link{URL: u, Tag: tag})
	}
}

// baseHref handles <base href>: it is reported, and the first one that
// resolves becomes the base.
func (e *Extractor) baseHref(ref string) {
	u, ok := e.resolve(e.pageBase, ref)
	if !ok {
		return
	}
	if !e.baseSet {
		if b, err := urlnorm.NewBase(u); err == nil {
			e.base, e.baseSet = b, true
		}
	}
	e.stats.Links++
	e.seen[u] = struct{}{}
	if e.emit != nil {
		e.emit(Link{URL: u, Tag: "base"})
	}
}

// meta handles <meta http-equiv="refresh" content="...">.
func (e *Extractor) meta(z *html.Tokenizer) {
	refresh := false
	var content []byte
	hasContent := false
	for more := true; more; {
		var key, val []byte
		key, val, more = z.TagAttr()
		switch string(key) {
		case "http-equiv":
			refresh = asciiEqualFold(trimSpace(val), "refresh")
		case "content":
			if !hasContent { // the first of duplicate attributes wins
				content = append(content[:0], val...)
				hasContent = true
			}
		}
	}
	if !refresh || !hasContent {
		return
	}
	ref, ok, hasURL := parseRefresh(content)
	if !ok {
		e.stats.Skipped++
		return
	}
	if hasURL {
		e.add("meta-refresh", ref)
	}
}
