package testweb

import "math"

// Tags of the elements that carry links.
const (
	tA uint8 = iota
	tArea
	tImg
	tScript
	tLink
	tIframe
	tForm
	tMeta // <meta http-equiv="refresh" content="N; url=...">
)

var tagNames = [...]string{"a", "area", "img", "script", "link", "iframe", "form", "meta"}
var attrNames = [...]string{"href", "href", "src", "src", "href", "src", "action", "content"}

// Ways a reference is written in the HTML; all resolve to the same URL.
const (
	fRoot   uint8 = iota // "/p/3.html"
	fAbs                 // "http://h0001.test/p/3.html"
	fUpper               // "http://H0001.TEST/p/3.html"
	fScheme              // "//h0001.test/p/3.html"
	fRel                 // "3.html", "../img/1.png", "p/3.html"
	fSelf                // "#top": the page itself (never on pages with <base>)
)

// elem is one link-carrying HTML element. An img may carry srcset
// candidates (always written absolute or root-relative).
type elem struct {
	t     target
	set   [2]target
	nset  uint8
	tag   uint8
	form  uint8
	quote uint8 // 0 "double", 1 'single', 2 unquoted
	frag  uint8 // 0: none, n: "#sN"
}

// page is a generated HTML page: its own URL, optional <base>, and the
// link-carrying elements in document order.
type page struct {
	self    target
	baseDir string // "" without <base href>
	effDir  string // directory relative references resolve against
	elems   []elem
}

// status codes of a target and, for redirects, where they lead.
func (w *Web) status(t target) int {
	if t.kind == kRoot {
		return 200
	}
	h := &w.hosts[t.host]
	if h.kind == trapHost {
		return 200
	}
	switch t.kind {
	case kPage:
		return w.pageStatus(t.host, t.id)
	case kPrivate:
		if t.id < int64(w.c.PagesPerHost) {
			return 200
		}
	case kImg:
		if t.id < numImg {
			return 200
		}
	case kJS:
		if t.id < numJS {
			return 200
		}
	case kCSS:
		if t.id < numCSS {
			return 200
		}
	case kSearch:
		return 200
	case kRobots:
		if !h.robots404 {
			return 200
		}
	}
	return 404
}

func (w *Web) pageStatus(h int32, id int64) int {
	if id == 0 {
		return 200
	}
	if id >= int64(w.c.PagesPerHost) || id < 0 {
		return 404
	}
	x := hash(uint64(w.c.Seed), saltStatus, uint64(h), uint64(id))
	u := unit(x)
	rf, ef := w.c.RedirectFraction, w.c.ErrorFraction
	switch {
	case u < rf:
		if x&1 == 0 {
			return 301
		}
		return 302
	case u < rf+ef:
		v := (u - rf) / ef
		switch {
		case v < 0.7:
			return 404
		case v < 0.9:
			return 500
		}
		return 503
	}
	return 200
}

// nextOK returns the smallest page id > id of host h that answers 200, or
// -1.
func (w *Web) nextOK(h int32, id int64) int64 {
	m := int64(w.c.PagesPerHost)
	for q, n := id+1, 0; q < m && n < 1000; q, n = q+1, n+1 {
		if w.pageStatus(h, q) == 200 {
			return q
		}
	}
	return -1
}

// redirect returns where a redirecting page leads and how the Location
// header writes it (fAbs, fRoot or fRel).
func (w *Web) redirect(h int32, id int64) (target, uint8) {
	x := hash(uint64(w.c.Seed), saltRedirect, uint64(h), uint64(id))
	if w.numGen > 1 && x%10 == 0 {
		o := int32((uint64(h) + 1 + (x>>8)%uint64(w.numGen-1)) % uint64(w.numGen))
		return target{host: o, kind: kPage}, fAbs
	}
	q := int64((x >> 8) % uint64(w.c.PagesPerHost))
	if q != 0 && w.pageStatus(h, q) != 200 {
		q = w.nextOK(h, q)
	}
	if q < 0 || q == id {
		q = 0
	}
	form := [...]uint8{fAbs, fAbs, fRoot, fRoot, fRel}[(x>>40)%5]
	if q == 0 && form == fRel {
		form = fRoot
	}
	return target{host: h, kind: kPage, id: q}, form
}

// numLinks draws the number of link-carrying elements of a page.
func (w *Web) numLinks(r *rng) int {
	n := math.Round(math.Exp(w.mu + w.sigma*r.norm()))
	return int(min(max(n, 1), float64(w.c.MaxLinks)))
}

// genPool builds the shared links of generated host h: stylesheet, script,
// logo, home page, search form, popular pages, an account page, partners.
func (w *Web) genPool(h int32) []elem {
	r := rng{hash(uint64(w.c.Seed), saltHost, uint64(h), 1)}
	m := int64(w.c.PagesPerHost)
	root := func(tag uint8, kind uint8, id int64) elem {
		return elem{tag: tag, t: target{host: h, kind: kind, id: id}, form: fRoot}
	}
	pool := []elem{
		root(tLink, kCSS, 0),
		root(tScript, kJS, 0),
		root(tImg, kImg, 0),
		root(tA, kPage, 0),
		root(tForm, kSearch, 0),
	}
	partners := 0
	if w.numGen > 1 {
		partners = 1 + r.intn(3)
	}
	size := w.c.PoolSize/2 + r.intn(w.c.PoolSize+1)
	top := int64(max(0, size-len(pool)-1-partners))
	for id := int64(1); id <= top && id < m; id++ {
		pool = append(pool, root(tA, kPage, id))
	}
	pool = append(pool, root(tA, kPrivate, 0))
	for range partners {
		o := w.hostRank[w.hostZipf.sample(r.float())]
		if o == h {
			o = (o + 1) % int32(w.numGen)
		}
		pool = append(pool, elem{tag: tA, t: target{host: o, kind: kPage}, form: fAbs})
	}
	return pool
}

// genPage generates the page at t (which must answer 200 with HTML) into
// elems (reused) and returns it.
func (w *Web) genPage(t target, elems []elem) page {
	p := page{self: t, elems: elems[:0]}
	if t.kind == kRoot {
		p.effDir = "/"
		for i := range w.hosts {
			p.elems = append(p.elems, elem{tag: tA, t: target{host: int32(i), kind: kPage}, form: fAbs})
		}
		return p
	}
	h := &w.hosts[t.host]
	if h.kind == trapHost {
		w.genTrap(&p)
		return p
	}
	r := rng{hash(uint64(w.c.Seed), saltPage, uint64(t.host), uint64(t.kind)<<56^uint64(t.id))}
	switch t.kind {
	case kPrivate:
		p.effDir = "/private/"
		p.elems = append(p.elems, elem{tag: tA, t: target{host: t.host, kind: kPage}, form: fRoot})
		if t.id > 0 {
			p.elems = append(p.elems, elem{tag: tA, t: target{host: t.host, kind: kPage, id: t.id}, form: fRel})
		}
		return p
	case kSearch:
		p.effDir = "/"
		p.elems = append(p.elems, elem{tag: tA, t: target{host: t.host, kind: kPage}, form: fRoot})
		return p
	}
	// An ordinary page. The query variant of a page has the same content.
	t.query = 0
	p.self = t
	p.effDir = "/"
	if t.id > 0 {
		p.effDir = "/p/"
	}
	n := w.numLinks(&r)
	if t.id == 0 {
		n = max(n, 2*len(h.pool))
	}
	if r.float() < 0.04 {
		p.baseDir = [...]string{"/", "/p/"}[r.intn(2)]
		p.effDir = p.baseDir
	}
	if r.float() < 0.01 {
		e := elem{tag: tMeta, t: w.pageTarget(&r, t.host, true), form: fRoot}
		e.t.query = 0
		if r.float() < 0.5 {
			e.form = fAbs
		}
		p.elems = append(p.elems, e)
	}
	if r.float() < w.c.SharedProb {
		take := min(len(h.pool), n/2)
		p.elems = append(p.elems, h.pool[:take]...)
	}
	next := w.nextOK(t.host, t.id)
	var set tset
	set.init(n)
	for i := range p.elems {
		set.add(p.elems[i].t)
	}
	for len(p.elems) < n {
		last := len(p.elems) == n-1
		if last && next > 0 {
			p.elems = append(p.elems, elem{tag: tA, t: target{host: t.host, kind: kPage, id: next}, form: w.sameForm(&r, &p, target{kind: kPage, id: next})})
			break
		}
		if len(p.elems) > 0 && r.float() < w.c.DuplicateProb {
			e := p.elems[r.intn(len(p.elems))]
			if e.tag == tMeta {
				e.tag = tA
			}
			if e.form != fSelf {
				e.form = w.formFor(&r, &p, e.t)
			}
			e.quote = quoteFor(&r)
			e.frag = 0
			if e.tag == tA && r.float() < 0.05 {
				e.frag = uint8(1 + r.intn(9))
			}
			p.elems = append(p.elems, e)
			continue
		}
		p.elems = append(p.elems, w.newElem(&r, &p, &set))
	}
	return p
}

// tset is a small open-addressing set of targets. Not safe for concurrent
// use.
type tset struct {
	slots []uint64
	n     int
	small [128]uint64
}

func (s *tset) init(n int) {
	size := 128
	for size < 2*n {
		size *= 2
	}
	if size == len(s.small) {
		s.slots = s.small[:]
	} else {
		s.slots = make([]uint64, size)
	}
}

func key(t target) uint64 {
	return fmix(uint64(t.host)<<48^uint64(t.kind)<<44^uint64(t.query)<<40^uint64(t.id)) | 1
}

func (s *tset) has(t target) bool {
	k := key(t)
	mask := uint64(len(s.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

func (s *tset) add(t target) {
	if 2*(s.n+1) > len(s.slots) {
		return // full enough; only a hint
	}
	k := key(t)
	mask := uint64(len(s.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return
		case 0:
			s.slots[i] = k
			s.n++
			return
		}
	}
}

// tagDraw is the distribution of the tags of new elements: a draw u in
// [0,1) picks the first tag whose bound is above it, tA past the last.
var tagDraw = [...]struct {
	below float64
	tag   uint8
}{
	{0.80, tA}, {0.89, tImg}, {0.905, tScript}, {0.92, tLink},
	{0.93, tIframe}, {0.94, tForm}, {0.955, tArea},
}

// newElem draws a fresh link-carrying element for page p; when the target
// is already in set it redraws the target (same tag, same choice of host
// class) a few times, so that on-page duplicates come mostly from
// DuplicateProb rather than chance.
func (w *Web) newElem(r *rng, p *page, set *tset) elem {
	var e elem
	e.tag = tA // the rest of the draws, past the last bound
	u := r.float()
	for _, d := range tagDraw {
		if u < d.below {
			e.tag = d.tag
			break
		}
	}
	if e.tag == tA && p.baseDir == "" && r.float() < 0.01 {
		e.t, e.form = p.self, fSelf
		return e
	}
	var same bool
	switch e.tag {
	case tA, tArea:
		same = r.float() < w.c.SameHostProb
	case tImg:
		same = w.numGen < 2 || r.float() < 0.9
	case tIframe:
		same = r.float() < 0.3
	}
	for try := 0; try < 5; try++ {
		w.drawTarget(r, p.self.host, &e, same)
		if !set.has(e.t) {
			break
		}
	}
	set.add(e.t)
	e.form = w.formFor(r, p, e.t)
	e.quote = quoteFor(r)
	if e.tag == tA && r.float() < 0.05 {
		e.frag = uint8(1 + r.intn(9))
	}
	return e
}

// drawTarget draws the target of e (and its srcset) for a page of host h.
func (w *Web) drawTarget(r *rng, h int32, e *elem, same bool) {
	e.nset = 0
	switch e.tag {
	case tA, tArea, tIframe:
		e.t = w.pageTarget(r, h, same)
	case tImg:
		e.t = w.imgTarget(r, h, same)
		if r.float() < 0.2 {
			e.nset = uint8(1 + r.intn(2))
			for i := range e.nset {
				e.set[i] = w.imgTarget(r, h, true)
			}
		}
	case tScript:
		e.t = target{host: h, kind: kJS, id: int64(r.intn(numJS))}
	case tLink:
		e.t = target{host: h, kind: kCSS, id: int64(r.intn(numCSS))}
	case tForm:
		e.t = target{host: h, kind: kSearch}
	}
}

func quoteFor(r *rng) uint8 {
	switch u := r.float(); {
	case u < 0.9:
		return 0
	case u < 0.96:
		return 1
	}
	return 2
}

// imgTarget draws an image of host h or, unless same, of another host.
func (w *Web) imgTarget(r *rng, h int32, same bool) target {
	if !same && w.numGen > 1 {
		h = w.crossHost(r, h)
	}
	return target{host: h, kind: kImg, id: int64(w.imgZipf.sample(r.float()))}
}

// crossHost draws another generated host by Zipf popularity.
func (w *Web) crossHost(r *rng, h int32) int32 {
	o := w.hostRank[w.hostZipf.sample(r.float())]
	if o == h {
		o = (o + 1) % int32(w.numGen)
	}
	return o
}

// pageTarget draws the target of a hyperlink from host h.
func (w *Web) pageTarget(r *rng, h int32, same bool) target {
	m := w.c.PagesPerHost
	if !same {
		if w.c.TrapHosts > 0 && r.float() < 0.003 {
			th := int32(w.numGen + r.intn(w.c.TrapHosts))
			switch r.intn(3) {
			case 0:
				return target{host: th, kind: kPage}
			case 1:
				return target{host: th, kind: kCal, id: 2024*12 + int64(r.intn(12))}
			}
			return target{host: th, kind: kDeep, id: int64(1 + r.intn(3))}
		}
		if w.numGen > 1 {
			return target{host: w.crossHost(r, h), kind: kPage, id: int64(w.pageZipf.sample(r.float()))}
		}
	}
	switch v := r.float(); {
	case v < 0.02:
		return target{host: h, kind: kPrivate, id: int64(r.intn(m))}
	case v < 0.03:
		return target{host: h, kind: kPage, id: int64(m + r.intn(m))} // broken link
	case v < 0.04:
		return target{host: h, kind: kSearch}
	}
	t := target{host: h, kind: kPage}
	if r.float() < 0.5 {
		t.id = int64(w.pageZipf.sample(r.float()))
	} else {
		t.id = int64(r.intn(m))
	}
	if t.id > 0 && r.float() < 0.01 {
		t.query = uint8(1 + r.intn(3))
	}
	return t
}

// formFor picks how a reference to t is written on page p.
func (w *Web) formFor(r *rng, p *page, t target) uint8 {
	if t.host != p.self.host {
		if r.float() < 0.9 {
			if r.float() < 0.03 {
				return fUpper
			}
			return fAbs
		}
		return fScheme
	}
	return w.sameForm(r, p, t)
}

func (w *Web) sameForm(r *rng, p *page, t target) uint8 {
	switch v := r.float(); {
	case v < 0.15:
		if r.float() < 0.03 {
			return fUpper
		}
		return fAbs
	case v < 0.7:
		return fRoot
	}
	if dirOf(t) != "" && p.effDir != "" {
		return fRel
	}
	return fRoot
}

// genTrap fills a trap host's page: the calendar links to the previous and
// next month, the deep path one level deeper, each back to "/".
func (w *Web) genTrap(p *page) {
	t := p.self
	h := t.host
	home := elem{tag: tA, t: target{host: h, kind: kPage}, form: fRoot}
	switch t.kind {
	case kPage:
		p.elems = append(p.elems,
			elem{tag: tA, t: target{host: h, kind: kCal, id: 2024 * 12}, form: fRoot},
			elem{tag: tA, t: target{host: h, kind: kDeep, id: 1}, form: fRoot})
		if w.numGen > 0 {
			p.elems = append(p.elems, elem{tag: tA, t: target{host: 0, kind: kPage}, form: fAbs})
		}
	case kCal:
		if t.id > 12 {
			p.elems = append(p.elems, elem{tag: tA, t: target{host: h, kind: kCal, id: t.id - 1}, form: fRoot})
		}
		p.elems = append(p.elems, elem{tag: tA, t: target{host: h, kind: kCal, id: t.id + 1}, form: fRoot}, home)
	case kDeep:
		p.elems = append(p.elems, elem{tag: tA, t: target{host: h, kind: kDeep, id: t.id + 1}, form: fRoot}, home)
	}
}
