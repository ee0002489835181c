package importer

// Common Crawl WAT import.
//
// # What the trace means
//
// A WAT file is a WARC file whose metadata records carry, as JSON, what
// Common Crawl's parser found in each record of the original WARC. For each
// metadata record describing an HTTP response (Envelope.WARC-Header-Metadata
// WARC-Type "response" for an http(s) WARC-Target-URI), the importer logs
// the URLs the crawltrace recorder would have sent to its host splitter
// after fetching that page:
//
//   - status 301, 302, 303, 307 or 308 with a Location header (from
//     Payload-Metadata.HTTP-Response-Metadata.Response-Message.Status and
//     .Headers): the Location, kind "redirect", null tag;
//   - status 200 (or no status given): the links of
//     HTTP-Response-Metadata.HTML-Metadata, kind "link", in this order:
//     Head.Base (tag "base"), Head.Link[] (LINK elements, wherever they
//     were in the page), Head.Scripts[] (SCRIPT src), then Links[]
//     (everything else, in document order). The parser files links by kind,
//     so document order across these groups is lost.
//
// WAT stores links as written in the page. They are resolved against the
// page URL, or against Head.Base when present (itself resolved against the
// page URL), and normalized; values that do not resolve (javascript:,
// mailto:) are dropped, as the recorder's extractor drops them. A link's
// tag is the element of its path, lower-cased: "A@/href" is "a",
// "IMG@/src" is "img", "STYLE/#text" (a CSS url()) is "style".
//
// Node, source, time and worker are as for WARC import: the node owning
// the page URL, a sequential id per distinct page URL in this import, the
// WARC-Date of the described record (else of the metadata record), worker
// 0. Records that describe anything else (warcinfo, request, metadata) and
// records that are not JSON metadata are counted in [Stats.Skipped]; a
// record whose JSON does not parse, or is larger than [MaxBodyBytes], is
// counted as bad with its record number. Framing errors are handled as in
// WARC import.

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// watRecord is the part of a WAT JSON record the importer reads.
type watRecord struct {
	Envelope struct {
		Header struct {
			Type      string `json:"WARC-Type"`
			TargetURI string `json:"WARC-Target-URI"`
			Date      string `json:"WARC-Date"`
		} `json:"WARC-Header-Metadata"`
		Payload struct {
			HTTP *struct {
				Message struct {
					Status json.RawMessage `json:"Status"` // "200" or 200
				} `json:"Response-Message"`
				Headers map[string]json.RawMessage `json:"Headers"` // string or [string]
				HTML    *struct {
					Head struct {
						Base    json.RawMessage `json:"Base"` // string or [string]
						Link    []watLink       `json:"Link"`
						Scripts []watLink       `json:"Scripts"`
					} `json:"Head"`
					Links []watLink `json:"Links"`
				} `json:"HTML-Metadata"`
			} `json:"HTTP-Response-Metadata"`
		} `json:"Payload-Metadata"`
	} `json:"Envelope"`
}

// watLink is one entry of a WAT link list.
type watLink struct {
	Path string  `json:"path"` // "A@/href", "IMG@/src", "STYLE/#text"
	URL  *string `json:"url"`
	Href *string `json:"href"` // CSS links carry href instead of url
}

// tag is the lower-case element of the link's path.
func (l *watLink) tag() string {
	p := l.Path
	if i := strings.IndexAny(p, "@/"); i >= 0 {
		p = p[:i]
	}
	return strings.ToLower(p)
}

// WAT imports Common Crawl WAT files (gzip-compressed or plain); see the
// file documentation for what is logged. "-" is standard input.
func WAT(files []string, opts Options) (*Stats, error) {
	return importAll(files, opts, func(s *Sink, src *sources, path string, r io.Reader) error {
		return readWARC(s, path, r, func(rec *warcRecord) error {
			return importWATRecord(s, src, path, rec)
		})
	})
}

func importWATRecord(s *Sink, src *sources, path string, rec *warcRecord) error {
	if rec.get("warc-type") != "metadata" || !strings.HasPrefix(strings.ToLower(rec.get("content-type")), "application/json") {
		s.Stats.Skipped++
		return nil
	}
	if rec.length > MaxBodyBytes {
		s.BadLine(path, rec.num, fmt.Sprintf("metadata record of %d bytes is larger than %d", rec.length, MaxBodyBytes))
		return nil
	}
	var w watRecord
	if err := json.NewDecoder(rec.block).Decode(&w); err != nil {
		s.BadLine(path, rec.num, "WAT JSON: "+err.Error())
		return nil
	}
	env := &w.Envelope
	if env.Header.Type != "response" || env.Payload.HTTP == nil {
		s.Stats.Skipped++
		return nil
	}
	target := env.Header.TargetURI
	if target == "" {
		target = rec.targetURI()
	}
	if !isHTTP(target) {
		s.Stats.Skipped++
		return nil
	}
	page, ok := s.targetPage(path, rec, target)
	if !ok {
		return nil
	}
	base, err := urlnorm.NewBase(target)
	if err != nil {
		s.BadLine(path, rec.num, "WARC-Target-URI: "+err.Error())
		return nil
	}
	d, err := time.Parse(time.RFC3339Nano, env.Header.Date)
	if err != nil {
		d = rec.date()
	}
	var t int64 // 0: the Sink stamps the import time
	if !d.IsZero() {
		t = d.UnixNano()
	}
	add := func(b *urlnorm.Base, ref, kind, tag string) error {
		u, err := b.Resolve(ref)
		if err != nil {
			return nil // javascript:, mailto:, malformed: dropped as the extractor does
		}
		// The page gets its source id with its first logged URL.
		node, source := src.page(s, page, true)
		return s.Add(node, -1, tracefile.URLRecord{Time: t, URL: u, Kind: kind, Tag: tag, Source: source})
	}

	resp := env.Payload.HTTP
	status := 0
	if st := strings.Trim(string(resp.Message.Status), `"`); st != "" {
		status, _ = strconv.Atoi(st)
	}
	switch status {
	case 301, 302, 303, 307, 308:
		for name, v := range resp.Headers {
			if strings.EqualFold(name, "Location") {
				if loc := firstString(v); loc != "" {
					return add(base, loc, tracefile.URLRedirect, "")
				}
			}
		}
		return nil
	case 0, 200:
	default:
		return nil
	}
	html := resp.HTML
	if html == nil {
		return nil
	}
	if b := firstString(html.Head.Base); b != "" {
		if err := add(base, b, tracefile.URLLink, "base"); err != nil {
			return err
		}
		if u, err := base.Resolve(b); err == nil {
			if nb, err := urlnorm.NewBase(u); err == nil {
				base = nb
			}
		}
	}
	for _, list := range [][]watLink{html.Head.Link, html.Head.Scripts, html.Links} {
		for i := range list {
			l := &list[i]
			ref := l.URL
			if ref == nil {
				ref = l.Href
			}
			if ref == nil {
				continue
			}
			// An empty value resolves to the base, as in the extractor.
			if err := add(base, *ref, tracefile.URLLink, l.tag()); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstString decodes a JSON string, or the first string of a JSON array;
// "" otherwise.
func firstString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil && len(l) > 0 {
		return l[0]
	}
	return ""
}
