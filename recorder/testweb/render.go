package testweb

import (
	"strconv"
	"strings"
)

var words = strings.Fields(`the of and to in is for on that with as by at from
crawler page link web server host cache url frontier fetch queue document index
graph archive report news list about contact help data table image library
search result topic section chapter note paper study review article guide
market sport music travel weather science history local world update`)

// appendRef writes the reference to t in the given form, HTML-escaped
// (without quotes).
func (w *Web) appendRef(b []byte, p *page, t target, form, frag uint8) []byte {
	switch form {
	case fSelf:
		return append(b, "#top"...)
	case fAbs, fUpper, fScheme:
		if form == fScheme {
			b = append(b, "//"...)
		} else {
			b = append(b, "http://"...)
		}
		name := w.hosts[t.host].name
		if form == fUpper {
			for i := 0; i < len(name); i++ {
				c := name[i]
				if 'a' <= c && c <= 'z' {
					c -= 'a' - 'A'
				}
				b = append(b, c)
			}
		} else {
			b = append(b, name...)
		}
		b = appendPath(b, t, "&amp;")
	case fRel:
		// All directories are one level deep, so "../" always suffices.
		tdir := dirOf(t)
		start := len(b)
		b = appendPath(b, t, "&amp;")
		rest := string(b[start+len(tdir):]) // name and query
		b = b[:start]
		switch {
		case p.effDir == tdir:
		case p.effDir == "/":
			b = append(b, tdir[1:]...)
		default:
			b = append(b, "../"...)
			b = append(b, tdir[1:]...)
		}
		b = append(b, rest...)
	default:
		b = appendPath(b, t, "&amp;")
	}
	if frag != 0 {
		b = append(b, "#s"...)
		b = append(b, '0'+frag)
	}
	return b
}

// appendAttr writes ` name=VALUE` with the element's quoting.
func (w *Web) appendAttr(b []byte, name string, p *page, e *elem) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, '=')
	q := byte('"')
	switch {
	case e.quote == 1:
		q = '\''
	case e.quote == 2 && e.t.query == 0:
		q = 0
	}
	if q != 0 {
		b = append(b, q)
	}
	b = w.appendRef(b, p, e.t, e.form, e.frag)
	if q != 0 {
		b = append(b, q)
	}
	return b
}

// appendWords writes n filler words.
func appendWords(b []byte, r *rng, n int) []byte {
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[r.intn(len(words))]...)
	}
	return b
}

// appendHTML renders page p. Head elements (a meta refresh, stylesheets and
// scripts at the start of the element list) go into <head>; the document
// order of the links is the order of p.elems.
func (w *Web) appendHTML(b []byte, p *page) []byte {
	r := rng{hash(uint64(w.c.Seed), saltFiller, uint64(p.self.host), uint64(p.self.kind)<<56^uint64(p.self.id))}
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"...)
	if p.self.kind == kRoot {
		b = append(b, "testweb root index"...)
	} else {
		b = append(b, w.hosts[p.self.host].name...)
		b = appendPath(b, p.self, "&amp;")
	}
	b = append(b, "</title>\n"...)
	if p.baseDir != "" {
		b = append(b, "<base href=\"http://"...)
		b = append(b, w.hosts[p.self.host].name...)
		b = append(b, p.baseDir...)
		b = append(b, "\">\n"...)
	}
	i := 0
	for ; i < len(p.elems); i++ {
		e := &p.elems[i]
		if e.tag != tMeta && e.tag != tLink && e.tag != tScript {
			break
		}
		b = w.appendElem(b, p, e, &r)
	}
	b = append(b, "</head>\n<body><a name=\"top\"></a>\n<h1>"...)
	b = appendWords(b, &r, 2+r.intn(4))
	b = append(b, "</h1>\n"...)
	if p.self.kind == kRoot {
		b = append(b, "<p>Virtual hosts of this test web. Map every host name to this server (for example\n"+
			"curl --resolve 'h0001.test:80:127.0.0.1' or a crawler's host-to-address mapping);\n"+
			"the seed URLs are also listed as text at /seeds.txt.</p>\n"...)
	}
	for ; i < len(p.elems); i++ {
		if r.intn(3) == 0 {
			b = append(b, "<p>"...)
			b = appendWords(b, &r, 6+r.intn(20))
			b = append(b, ".</p>\n"...)
		}
		b = w.appendElem(b, p, &p.elems[i], &r)
	}
	b = append(b, "<p>"...)
	b = appendWords(b, &r, 10)
	return append(b, ".</p>\n</body></html>\n"...)
}

// The markup before and after the one URL attribute of the tags written
// with nothing else drawn at random.
var (
	elemOpen = [...]string{
		tScript: "<script",
		tLink:   "<link rel=\"stylesheet\"",
		tIframe: "<iframe",
		tForm:   "<form method=\"get\"",
	}
	elemClose = [...]string{
		tScript: "></script>\n",
		tLink:   ">\n",
		tIframe: " width=\"300\" height=\"250\"></iframe>\n",
		tForm:   "><input name=\"q\"><input type=\"submit\"></form>\n",
	}
)

func (w *Web) appendElem(b []byte, p *page, e *elem, r *rng) []byte {
	switch e.tag {
	case tA:
		b = append(b, "<a"...)
		b = w.appendAttr(b, "href", p, e)
		b = append(b, '>')
		b = appendWords(b, r, 1+r.intn(3))
		b = append(b, "</a>\n"...)
	case tArea:
		b = append(b, "<map name=\"m"...)
		b = strconv.AppendInt(b, int64(r.intn(1000)), 10)
		b = append(b, "\"><area shape=\"rect\" coords=\"0,0,40,20\""...)
		b = w.appendAttr(b, "href", p, e)
		b = append(b, " alt=\"\"></map>\n"...)
	case tImg:
		b = append(b, "<img"...)
		b = w.appendAttr(b, "src", p, e)
		if e.nset > 0 {
			b = append(b, " srcset=\""...)
			for i := range e.nset {
				if i > 0 {
					b = append(b, ", "...)
				}
				form := fRoot
				if e.set[i].host != p.self.host {
					form = fAbs
				}
				b = w.appendRef(b, p, e.set[i], form, 0)
				b = append(b, ' ')
				b = append(b, '2'+i)
				b = append(b, 'x')
			}
			b = append(b, '"')
		}
		b = append(b, " alt=\""...)
		b = appendWords(b, r, 1)
		b = append(b, "\">\n"...)
	case tScript, tLink, tIframe, tForm:
		b = append(b, elemOpen[e.tag]...)
		b = w.appendAttr(b, attrNames[e.tag], p, e)
		b = append(b, elemClose[e.tag]...)
	case tMeta:
		b = append(b, "<meta http-equiv=\"refresh\" content=\"30; url="...)
		b = w.appendRef(b, p, e.t, e.form, 0)
		b = append(b, "\">\n"...)
	}
	return b
}

// appendLinks appends the ground-truth links of p, in document order; self
// is the URL the page was requested as ("#top" resolves to it).
func (w *Web) appendLinks(out []Link, p *page, self string) []Link {
	for i := range p.elems {
		e := &p.elems[i]
		u := self
		if e.form != fSelf {
			u = w.urlOf(e.t)
		}
		out = append(out, Link{URL: u, Tag: tagNames[e.tag], Attr: attrNames[e.tag]})
		for j := range e.nset {
			out = append(out, Link{URL: w.urlOf(e.set[j]), Tag: "img", Attr: "srcset"})
		}
	}
	return out
}
