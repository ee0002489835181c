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
package extract

import (
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/crawltrace/crawltrace/recorder/urlnorm"
	"golang.org/x/net/html"
)

// Link is one URL-bearing attribute occurrence.
type Link struct {
	URL string // absolute and normalized (urlnorm)
	Tag string // lower-case element name ("a", "img", "base", ...; "meta-refresh" for a meta refresh)
}

// Stats counts one page's URL-bearing attribute occurrences.
type Stats struct {
	Links   int // URLs emitted, duplicates included
	Unique  int // distinct URLs emitted on this page
	Skipped int // values that did not resolve or normalize
}

// Extractor extracts links from HTML pages. It is reusable and not safe for
// concurrent use (use one per worker); it keeps its buffers between pages.
type Extractor struct {
	seen map[string]struct{}
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
	return &Extractor{seen: make(map[string]struct{}, 128)}
}

// Extract reads an HTML document from r (the page was fetched from base) and
// calls emit for every URL-bearing attribute occurrence in document order,
// duplicates included. It honors <base href>. Links that do not resolve or
// normalize (javascript:, mailto:, malformed) are counted, not emitted. A
// nil base allows only absolute URLs; a base that does not normalize is an
// error. The error is nil at the end of the input, else the read error; the
// stats then cover the part read. emit may be nil.
func (e *Extractor) Extract(r io.Reader, base *url.URL, emit func(Link)) (Stats, error) {
	clear(e.seen)
	e.stats = Stats{}
	e.emit = emit
	e.pageBase, e.base, e.baseSet = nil, nil, false
	defer func() { e.emit = nil }()
	if base != nil {
		b, err := urlnorm.NewBase(base.String())
		if err != nil {
			return Stats{}, fmt.Errorf("extract: page URL: %w", err)
		}
		e.pageBase, e.base = b, b
	}

	z := html.NewTokenizer(r)
	for {
		switch z.Next() {
		case html.ErrorToken:
			e.stats.Unique = len(e.seen)
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

// add resolves ref and emits it, or counts it as skipped.
func (e *Extractor) add(tag, ref string) {
	var u string
	var err error
	if e.base != nil {
		u, err = e.base.Resolve(ref)
	} else {
		u, err = urlnorm.Normalize(ref)
	}
	if err != nil {
		e.stats.Skipped++
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
	var u string
	var err error
	if e.pageBase != nil {
		u, err = e.pageBase.Resolve(ref)
	} else {
		u, err = urlnorm.Normalize(ref)
	}
	if err != nil {
		e.stats.Skipped++
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
