package recorder

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// hostState is one host's queue and politeness state inside a [frontier].
// A host is keyed by its origin (scheme://host:port), the unit robots.txt
// applies to.
type hostState struct {
	origin  string
	queue   []string
	head    int
	nextAt  time.Time // earliest start of the next request
	busy    bool      // a worker holds the host (a request is in flight)
	robots  *robotsRules
	heapIdx int // index in the ready heap, -1 when absent
	seq     uint64
}

func (h *hostState) queued() int { return len(h.queue) - h.head }

// task is what a worker does next: fetch robots.txt of host, or fetch url.
type task struct {
	host   *hostState
	url    string
	robots bool
}

// frontier holds the URLs a node has yet to fetch: one queue per host and a
// heap of hosts ordered by the time each may next be fetched. A host leaves
// the heap while a worker holds it, so there is never more than one request
// in flight per host. It is safe for concurrent use.
type frontier struct {
	mu     sync.Mutex
	hosts  map[string]*hostState
	ready  hostHeap
	wake   chan struct{} // closed (and replaced) when the heap top changes
	order  string
	rng    *rand.Rand
	seq    uint64
	queued int
	closed bool
}

func newFrontier(order string, seed uint64) *frontier {
	return &frontier{hosts: make(map[string]*hostState), wake: make(chan struct{}), order: order,
		rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// originOf returns scheme://authority of an absolute URL.
func originOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	j := strings.IndexAny(u[i+3:], "/?#")
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}

// add queues u. It never blocks.
func (f *frontier) add(u string) {
	o := originOf(u)
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[o]
	if h == nil {
		f.seq++
		h = &hostState{origin: o, heapIdx: -1, seq: f.seq}
		f.hosts[o] = h
	}
	h.queue = append(h.queue, u)
	f.queued++
	if !h.busy && h.heapIdx < 0 {
		heap.Push(&f.ready, h)
		if h.heapIdx == 0 {
			f.broadcast()
		}
	}
}

func (f *frontier) broadcast() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// next blocks until a host may be fetched and returns its task; the host
// is then held until [frontier.release]. It returns false when ctx is done
// or the frontier is closed.
func (f *frontier) next(ctx context.Context) (task, bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		f.mu.Lock()
		if f.closed || ctx.Err() != nil {
			f.mu.Unlock()
			return task{}, false
		}
		var wait time.Duration = -1
		if len(f.ready) > 0 {
			h := f.ready[0]
			now := time.Now()
			if !h.nextAt.After(now) {
				heap.Pop(&f.ready)
				h.busy = true
				t := task{host: h}
				if h.robots == nil {
					t.robots = true
				} else {
					t.url = f.pop(h)
				}
				f.mu.Unlock()
				return t, true
			}
			wait = h.nextAt.Sub(now)
		}
		ch := f.wake
		f.mu.Unlock()
		var tc <-chan time.Time
		if wait >= 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			return task{}, false
		case <-ch:
		case <-tc:
		}
	}
}

// pop removes the next URL of h by the crawl order. f.mu is held.
func (f *frontier) pop(h *hostState) string {
	var u string
	switch f.order {
	case OrderDFS:
		u = h.queue[len(h.queue)-1]
		h.queue = h.queue[:len(h.queue)-1]
	case OrderRandom:
		i := h.head + f.rng.IntN(h.queued())
		u = h.queue[i]
		last := len(h.queue) - 1
		h.queue[i] = h.queue[last]
		h.queue = h.queue[:last]
	default:
		u = h.queue[h.head]
		h.queue[h.head] = ""
		h.head++
		if h.head == len(h.queue) {
			h.queue, h.head = h.queue[:0], 0
		} else if h.head >= 1024 && h.head*2 >= len(h.queue) {
			h.queue = append(h.queue[:0], h.queue[h.head:]...)
			h.head = 0
		}
	}
	f.queued--
	return u
}

// release returns a held host. When requested is true a request was made
// and the host waits delay before the next one; otherwise (a URL skipped
// by robots.txt) its schedule is unchanged.
func (f *frontier) release(h *hostState, requested bool, delay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h.busy = false
	if requested {
		h.nextAt = time.Now().Add(delay)
	}
	if h.queued() > 0 {
		heap.Push(&f.ready, h)
		if h.heapIdx == 0 {
			f.broadcast()
		}
	}
}

// close wakes and stops every waiting worker.
func (f *frontier) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.broadcast()
	}
}

// sizes returns the number of queued URLs and known hosts.
func (f *frontier) sizes() (queued, hosts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued, len(f.hosts)
}

// hostHeap orders hosts by nextAt, then by first appearance.
type hostHeap []*hostState

func (q hostHeap) Len() int { return len(q) }
func (q hostHeap) Less(i, j int) bool {
	if !q[i].nextAt.Equal(q[j].nextAt) {
		return q[i].nextAt.Before(q[j].nextAt)
	}
	return q[i].seq < q[j].seq
}
func (q hostHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].heapIdx = i
	q[j].heapIdx = j
}
func (q *hostHeap) Push(x any) {
	h := x.(*hostState)
	h.heapIdx = len(*q)
	*q = append(*q, h)
}
func (q *hostHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	h.heapIdx = -1
	return h
}
