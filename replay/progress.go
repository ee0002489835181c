package replay

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints "replay: 12/40 runs, 3.1M requests/s" rewritten in place,
// at most a few times a second. A nil writer makes it silent.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
	reqs  int64
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, start: time.Now()}
}

func (p *progress) done(rows []Row) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if len(rows) > 0 {
		p.reqs += rows[0].Requests * int64(max(rows[0].Seeds, 1))
	}
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond && p.n < p.total {
		return
	}
	p.last = now
	rate := float64(p.reqs) / max(now.Sub(p.start).Seconds(), 1e-9)
	fmt.Fprintf(p.w, "\rreplay: %d/%d runs, %.1fM requests/s   ", p.n, p.total, rate/1e6)
}

func (p *progress) finish() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n > 0 {
		fmt.Fprintln(p.w)
	}
}
