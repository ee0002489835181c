package testweb

import (
	"fmt"
	"strconv"
	"strings"
)

// Link is one link of a generated page, as a crawler's extractor should
// find it.
type Link struct {
	// URL is absolute and normalized: scheme and host lower case, no port,
	// no fragment, resolved against the page URL or its <base href>.
	URL string
	// Tag and Attr name where the link was: a/href, area/href, img/src,
	// img/srcset (one Link per candidate), script/src, link/href,
	// iframe/src, form/action, meta/content (a meta refresh's url=).
	// <base href> is not a link.
	Tag, Attr string
}

// Page is what the web answers for one URL.
type Page struct {
	// URL is the URL looked up, normalized.
	URL string
	// Status is the HTTP status code; 0 for the hosts of Config.Sites,
	// whose files are not inspected.
	Status int
	// Location is the absolute target of a redirect (Status 301 or 302).
	Location string
	// ContentType is the Content-Type header of a 200 answer.
	ContentType string
	// Links are the page's links in document order, duplicates included,
	// for a 200 HTML answer; nil otherwise.
	Links []Link
}

// Page returns page id (0 is the home page) of generated host host.
func (w *Web) Page(host string, id int) (Page, error) {
	i, ok := w.byName[hostOnly(host)]
	if !ok || w.hosts[i].kind != genHost {
		return Page{}, fmt.Errorf("testweb: %q is not a generated host", host)
	}
	if id < 0 || id >= w.c.PagesPerHost {
		return Page{}, fmt.Errorf("testweb: page %d of %s out of range [0, %d)", id, host, w.c.PagesPerHost)
	}
	return w.lookup(target{host: i, kind: kPage, id: int64(id)}), nil
}

// Lookup returns what the web answers for the absolute http URL u (a GET
// request with any Host-header port). Unknown hosts and malformed URLs give
// Status 404; a URL addressed to an IP address or localhost is the root
// index.
func (w *Web) Lookup(u string) Page {
	t, host, ok := w.resolve(u)
	if !ok {
		return Page{URL: u, Status: 404}
	}
	if t.kind == kRoot {
		p := w.lookup(t)
		p.URL = "http://" + host + "/"
		return p
	}
	if w.hosts[t.host].kind == siteHost {
		return Page{URL: u}
	}
	return w.lookup(t)
}

// Links returns the ground truth for a crawler's link extractor: the
// absolute, normalized URLs of every link the page at u contains, in
// document order and with duplicates (see [Link] for which tags count).
// It is nil for anything that is not a 200 HTML page of a generated or trap
// host (or the root index).
func (w *Web) Links(u string) []string {
	p := w.Lookup(u)
	if len(p.Links) == 0 {
		return nil
	}
	out := make([]string, len(p.Links))
	for i, l := range p.Links {
		out[i] = l.URL
	}
	return out
}

// Status returns the status code the web answers for u and, for a
// redirect, the absolute Location.
func (w *Web) Status(u string) (code int, location string) {
	t, _, ok := w.resolve(u)
	if !ok {
		return 404, ""
	}
	if t.kind != kRoot && w.hosts[t.host].kind == siteHost {
		return 0, ""
	}
	code = w.status(t)
	if code == 301 || code == 302 {
		rt, _ := w.redirect(t.host, t.id)
		location = w.urlOf(rt)
	}
	return code, location
}

// resolve maps an absolute URL to a target.
func (w *Web) resolve(u string) (target, string, bool) {
	hostName, path, query, ok := splitURL(u)
	if !ok {
		return target{}, "", false
	}
	if isRootHost(hostName) {
		if path != "/" {
			return target{}, "", false
		}
		host := u[strings.Index(u, "//")+2:]
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		return target{kind: kRoot}, strings.ToLower(host), true
	}
	i, ok := w.byName[hostName]
	if !ok {
		return target{}, "", false
	}
	h := &w.hosts[i]
	if h.kind == siteHost {
		return target{host: i}, hostName, true
	}
	t, ok := parseTarget(path, query, h.kind == trapHost)
	if !ok {
		return target{}, "", false
	}
	t.host = i
	return t, hostName, true
}

// lookup answers for a target of a generated or trap host, or the root.
func (w *Web) lookup(t target) Page {
	var p Page
	if t.kind == kRoot {
		p.Status = 200
	} else {
		p.URL = w.urlOf(t)
		p.Status = w.status(t)
	}
	switch p.Status {
	case 301, 302:
		rt, _ := w.redirect(t.host, t.id)
		p.Location = w.urlOf(rt)
		return p
	case 200:
	default:
		return p
	}
	p.ContentType = contentType(t.kind)
	if !isHTML(t.kind) {
		return p
	}
	ep := w.elemPool.Get()
	var elems []elem
	if ep != nil {
		elems = *(ep.(*[]elem))
	}
	pg := w.genPage(t, elems)
	p.Links = w.appendLinks(make([]Link, 0, len(pg.elems)+4), &pg, p.URL)
	elems = pg.elems[:0]
	w.elemPool.Put(&elems)
	return p
}

func isHTML(kind uint8) bool {
	switch kind {
	case kImg, kJS, kCSS, kRobots:
		return false
	}
	return true
}

func contentType(kind uint8) string {
	switch kind {
	case kImg:
		return "image/png"
	case kJS:
		return "text/javascript; charset=utf-8"
	case kCSS:
		return "text/css; charset=utf-8"
	case kRobots:
		return "text/plain; charset=utf-8"
	}
	return "text/html; charset=utf-8"
}

// robotsTxt returns the robots.txt of host h.
func (w *Web) robotsTxt(h *host) []byte {
	if !h.robots {
		return []byte("User-agent: *\nDisallow:\n")
	}
	var b []byte
	b = append(b, "# robots.txt for "...)
	b = append(b, h.name...)
	b = append(b, "\nUser-agent: badbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nDisallow: /p/*?ref=\n"...)
	if h.crawlDelay {
		b = append(b, "Crawl-delay: "...)
		b = strconv.AppendFloat(b, w.c.CrawlDelay, 'f', -1, 64)
		b = append(b, '\n')
	}
	return b
}
