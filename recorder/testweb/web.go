package testweb

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

type hostKind uint8

const (
	genHost  hostKind = iota // generated pages
	trapHost                 // infinite calendar and deep path
	siteHost                 // static directory
)

// host holds everything about one virtual host; read-only after New.
type host struct {
	name       string
	kind       hostKind
	idx        int32
	robots     bool // robots.txt with Disallow rules
	robots404  bool // no robots.txt at all (404); otherwise an allow-all file
	crawlDelay bool
	gzip       bool
	maxPerConn int64
	respMean   time.Duration
	connTime   time.Duration
	pool       []elem // shared links (navigation bar)
	site       http.Handler
	dir        string
}

// Web is a deterministic synthetic web: a set of virtual hosts whose pages
// are generated on the fly from (seed, host, page id). It is read-only after
// [New] and safe for concurrent use; no request takes a global lock.
type Web struct {
	c        Config
	hosts    []host // generated hosts, then trap hosts, then sites by name
	byName   map[string]int32
	numGen   int // generated hosts are hosts[:numGen]
	mu       float64
	sigma    float64
	pageZipf *zipfTable // popularity of the pages within a host
	hostZipf *zipfTable // popularity of the generated hosts
	hostRank []int32    // popularity rank -> host index
	imgZipf  *zipfTable

	elemPool sync.Pool // *[]elem
	bufPool  sync.Pool // *[]byte

	qOnce   sync.Once
	quality map[string]float64
}

// HostInfo describes one virtual host of a [Web].
type HostInfo struct {
	Name string
	// Kind is "generated", "trap" or "site".
	Kind string
	// Robots reports a robots.txt with Disallow rules; CrawlDelay is its
	// Crawl-delay in seconds, or -1 when it has none.
	Robots     bool
	CrawlDelay float64
	// Gzip reports that the host compresses responses on request.
	Gzip bool
	// MaxRequestsPerConn is the number of requests the host serves on one
	// connection before closing it (0: unlimited, or KeepAliveLimits off).
	MaxRequestsPerConn int
	// ResponseTime is the host's mean response time and ConnectTime its
	// connection setup time; both zero unless Config.Latency is on.
	ResponseTime time.Duration
	ConnectTime  time.Duration
}

// Salts that keep the per-purpose random streams independent.
const (
	saltHost uint64 = iota + 1
	saltPage
	saltStatus
	saltRedirect
	saltRank
	saltLatency
	saltQuality
	saltFiller
)

// New builds the web described by c (see [Config] for defaults).
func New(c Config) (*Web, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Web{c: c, byName: make(map[string]int32)}
	w.mu = math.Log(c.LinksMedian)
	w.sigma = math.Sqrt(2 * math.Log(c.LinksMean/c.LinksMedian))
	seed := uint64(c.Seed)

	width := max(4, len(fmt.Sprint(c.Hosts)))
	add := func(h host) {
		h.idx = int32(len(w.hosts))
		w.byName[h.name] = h.idx
		w.hosts = append(w.hosts, h)
	}
	for i := range c.Hosts {
		r := rng{hash(seed, saltHost, uint64(i), 0)}
		h := host{name: fmt.Sprintf("h%0*d.test", width, i+1), kind: genHost}
		h.robots = r.float() < c.RobotsFraction
		h.crawlDelay = h.robots && r.float() < c.CrawlDelayFraction
		h.robots404 = !h.robots && r.float() < 0.5
		h.gzip = r.float() < c.GzipFraction
		if c.KeepAliveLimits {
			switch u := r.float(); {
			case u < 0.24:
				h.maxPerConn = 1
			case u < 0.90:
				h.maxPerConn = 100
			default:
				h.maxPerConn = 2 + int64(r.intn(98))
			}
		}
		if c.Latency {
			h.respMean = time.Duration(float64(c.LatencyMedian) * math.Exp(0.8*r.norm()))
			h.connTime = time.Duration(float64(c.ConnectMedian) * math.Exp(0.8*r.norm()))
		}
		add(h)
	}
	w.numGen = c.Hosts
	for i := range c.TrapHosts {
		add(host{name: fmt.Sprintf("trap%d.test", i+1), kind: trapHost})
	}
	names := make([]string, 0, len(c.Sites))
	for name := range c.Sites {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		dir := c.Sites[name]
		hn := hostOnly(name)
		if hn == "" || strings.ContainsAny(hn, "/ \t") || isRootHost(hn) {
			return nil, fmt.Errorf("testweb: site %q: not a host name", name)
		}
		if _, dup := w.byName[hn]; dup {
			return nil, fmt.Errorf("testweb: site %q: host already exists", name)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("testweb: site %q: %w", name, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("testweb: site %q: %s is not a directory", name, dir)
		}
		add(host{name: hn, kind: siteHost, dir: dir, site: http.FileServer(http.Dir(dir))})
	}

	if c.Hosts > 0 {
		w.pageZipf = newZipf(c.PagesPerHost, 1)
		w.hostZipf = newZipf(c.Hosts, 1)
		w.imgZipf = newZipf(numImg, 1)
		// Popularity ranks are a seeded permutation, so h0001 is not
		// always the most linked host.
		w.hostRank = make([]int32, c.Hosts)
		for i := range w.hostRank {
			w.hostRank[i] = int32(i)
		}
		r := rng{hash(seed, saltRank, 0, 0)}
		for i := len(w.hostRank) - 1; i > 0; i-- {
			j := r.intn(i + 1)
			w.hostRank[i], w.hostRank[j] = w.hostRank[j], w.hostRank[i]
		}
		for i := range w.numGen {
			w.hosts[i].pool = w.genPool(int32(i))
		}
	}
	return w, nil
}

// Config returns the configuration of w with defaults filled in.
func (w *Web) Config() Config { return w.c }

// Hosts returns the names of all virtual hosts: generated hosts in order,
// then trap hosts, then sites sorted by name.
func (w *Web) Hosts() []string {
	out := make([]string, len(w.hosts))
	for i := range w.hosts {
		out[i] = w.hosts[i].name
	}
	return out
}

// Seeds returns the home page URL of every host, in [Web.Hosts] order, e.g.
// "http://h0001.test/". Trap hosts are included: a crawler must cope.
func (w *Web) Seeds() []string {
	out := make([]string, len(w.hosts))
	for i := range w.hosts {
		out[i] = "http://" + w.hosts[i].name + "/"
	}
	return out
}

// NumPages returns the number of generated HTML pages (hosts x pages per
// host), whatever their status.
func (w *Web) NumPages() int { return w.numGen * w.c.PagesPerHost }

// HostInfo describes the host named name.
func (w *Web) HostInfo(name string) (HostInfo, bool) {
	i, ok := w.byName[hostOnly(name)]
	if !ok {
		return HostInfo{}, false
	}
	h := &w.hosts[i]
	hi := HostInfo{
		Name: h.name, Kind: [...]string{"generated", "trap", "site"}[h.kind],
		Robots: h.robots, CrawlDelay: -1, Gzip: h.gzip,
		MaxRequestsPerConn: int(h.maxPerConn), ResponseTime: h.respMean, ConnectTime: h.connTime,
	}
	if h.crawlDelay {
		hi.CrawlDelay = w.c.CrawlDelay
	}
	return hi, true
}

// PageURL returns the URL of page id of a generated host: "http://HOST/" for
// id 0, "http://HOST/p/ID.html" otherwise.
func (w *Web) PageURL(host string, id int) string {
	return "http://" + hostOnly(host) + string(appendPath(nil, target{kind: kPage, id: int64(id)}, "&"))
}

func (w *Web) urlOf(t target) string {
	b := make([]byte, 0, 48)
	b = append(b, "http://"...)
	if t.kind == kRoot {
		return ""
	}
	b = append(b, w.hosts[t.host].name...)
	return string(appendPath(b, t, "&"))
}
