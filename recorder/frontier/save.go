package frontier

import (
	"encoding/gob"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// The frontier part of a crawl checkpoint is a gob stream: the number of
// servers, then per server a savedHost followed by its URLs in groups of
// at most savedGroup (savedURLs). A server with no key holds URLs that
// were waiting for their server's DNS lookup; they are keyed again when
// loaded. The type names are part of the stream (gob writes them), so
// they stay as they are.

// savedHost is one server in the frontier part, followed by its URLs in
// groups of at most savedGroup ([savedURLs]).
type savedHost struct {
	Key    string
	NextAt int64 // unix ns; 0 when none
	Robots *robots.State
	Count  int // queued URLs
}

type savedURLs struct {
	URLs []string
	Q    []float64
}

const savedGroup = 4096

// Part is the frontier as a node's checkpoint part ("frontier"): Save
// and Load over a gob stream. onURLs is told of each group of URLs a load
// queues (see load).
func (f *Frontier) Part(onURLs func(n int)) checkpoint.Part { return part{f, onURLs} }

type part struct {
	f      *Frontier
	onURLs func(n int)
}

func (part) Name() string             { return "frontier" }
func (p part) Save(w io.Writer) error { return p.f.save(gob.NewEncoder(w)) }
func (p part) Load(r io.Reader) error { return p.f.load(gob.NewDecoder(r), p.onURLs) }

// load reads a frontier save wrote, queueing its URLs on the servers
// they were saved under; onURLs is told of each group of URLs before it
// is queued (the node counts them as work to do). The node calls it
// before its workers start, on an empty frontier.
func (f *Frontier) load(dec *gob.Decoder, onURLs func(n int)) error {
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var h savedHost
		if err := dec.Decode(&h); err != nil {
			return fmt.Errorf("server %d of %d: %w", i, n, err)
		}
		f.restoreHost(&h)
		for left := h.Count; left > 0; {
			var g savedURLs
			if err := dec.Decode(&g); err != nil {
				return fmt.Errorf("server %s: %w", h.Key, err)
			}
			if len(g.URLs) == 0 || len(g.URLs) > left || len(g.Q) != len(g.URLs) {
				return fmt.Errorf("server %s: a group of %d URLs and %d qualities, %d left", h.Key, len(g.URLs), len(g.Q), left)
			}
			left -= len(g.URLs)
			onURLs(len(g.URLs))
			f.restoreURLs(h.Key, g.URLs, g.Q)
		}
	}
	return nil
}

// save writes the frontier's servers with enc, in the order they were
// first seen: each server's queued URLs, politeness time and robots.txt
// state, holding the frontier's lock (workers wait meanwhile). URLs held
// by workers come first in their server's list. It streams: spilled URLs
// are read back one chunk at a time, so saving takes no memory in
// proportion to the frontier.
func (f *Frontier) save(enc *gob.Encoder) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := map[string][]inflightURL{}
	ids := make([]uint64, 0, len(f.inflight))
	for id := range f.inflight {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		x := f.inflight[id]
		held[x.origin] = append(held[x.origin], x)
	}
	hs := make([]*Host, 0, len(f.s.hosts))
	for _, h := range f.s.hosts {
		if h.queued() > 0 || len(held[h.origin]) > 0 || h.robots != nil {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].seq < hs[j].seq })
	// URLs waiting for their server's DNS lookup (ip mode) follow, one
	// entry per host with no key: they are keyed again when loaded.
	waiting := slices.Sorted(maps.Keys(f.resolving))
	if err := enc.Encode(len(hs) + len(waiting)); err != nil {
		return err
	}
	var g savedURLs
	flush := func() error {
		if len(g.URLs) == 0 {
			return nil
		}
		err := enc.Encode(&g)
		g.URLs, g.Q = g.URLs[:0], g.Q[:0]
		return err
	}
	put := func(u string, q float64) error {
		g.URLs = append(g.URLs, u)
		g.Q = append(g.Q, q)
		if len(g.URLs) == savedGroup {
			return flush()
		}
		return nil
	}
	for _, h := range hs {
		in := held[h.origin]
		sh := savedHost{Key: h.origin, Count: len(in) + h.queued()}
		if !h.nextAt.IsZero() {
			sh.NextAt = h.nextAt.UnixNano()
		}
		if h.robots != nil {
			sh.Robots = h.robots.State()
		}
		if err := enc.Encode(&sh); err != nil {
			return err
		}
		for _, x := range in {
			if err := put(x.url, x.q); err != nil {
				return err
			}
		}
		if err := eachURL(h.first, put); err != nil {
			return err
		}
		if err := f.s.eachQueued(&h.urls, put); err != nil {
			return err
		}
		for _, p := range h.parked { // queued again; their origins' robots.txt is fetched anew when due
			if err := eachURL(p.urls, put); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	for _, host := range waiting {
		us := f.resolving[host]
		if err := enc.Encode(&savedHost{Count: len(us)}); err != nil {
			return err
		}
		for _, u := range us {
			if err := put(u, f.s.quality(u)); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// restoreHost sets a saved server's politeness and robots.txt state.
func (f *Frontier) restoreHost(sh *savedHost) {
	if sh.Key == "" {
		return // URLs that were waiting for a DNS lookup
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.s.host(sh.Key)
	if sh.Robots != nil {
		h.robots = sh.Robots.Rules()
	}
	if sh.NextAt != 0 {
		h.nextAt = time.Unix(0, sh.NextAt)
	}
}

// restoreURLs queues saved URLs on the server of politeness key, where
// they were saved: their keys are not computed again (in ip mode that
// was a DNS lookup per host, under the frontier's lock, at every resume).
// URLs saved with no key were waiting for a lookup, and are added anew.
func (f *Frontier) restoreURLs(key string, urls []string, qs []float64) {
	if key == "" {
		for _, u := range urls {
			f.Add(u) // keyed as a new URL is
		}
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	for i, u := range urls {
		q := qs[i]
		if math.IsNaN(q) {
			q = 0
		}
		f.s.addKeyed(key, u, q, now)
	}
}
