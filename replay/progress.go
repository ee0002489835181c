package replay

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/crawltrace/crawltrace/internal/progress"
)

// replayProgress reports the requests replayed of the whole grid, with the
// rate, the percentage and the time left, and the runs done, through the
// shared progress reporter (live on a terminal, a line every 10 s in a batch
// job):
//
//	replay: 2m10s 123456789/1000000000 requests (12.3%), 950k requests/s, ETA 15m24s; 1/3 runs
//
// Each run of the grid counts the requests of its trace once per pass (a
// randomized policy makes one pass per seed), and advances as it reads
// them, so a single long run (a one-pass curve over a billion requests)
// moves the line too. A sampled run counts the requests of the whole trace
// (the share of it read, for a sample held in memory). A trace whose length
// is unknown before a pass (text) leaves the total unknown: no percentage
// or ETA, only the rate. A nil writer makes it silent.
type replayProgress struct {
	rep   *progress.Reporter
	units int
	runs  atomic.Int64
	reqs  atomic.Int64
}

func newProgress(w io.Writer, units int, total int64) *replayProgress {
	return &replayProgress{rep: progress.New(w, "replay", "requests", max(total, 0)), units: units}
}

func (p *replayProgress) show() {
	p.rep.Update(p.reqs.Load(), fmt.Sprintf("%d/%d runs", p.runs.Load(), p.units))
}

// unitTicker advances the progress of one run: its passes over the trace.
type unitTicker struct {
	p      *replayProgress
	n      int64 // requests of the trace, -1 when unknown
	passes int64 // passes the run makes
	added  int64 // requests counted so far
	inPass int64 // of which in the current pass
}

// unit starts reporting a run of the given passes over a trace of n
// requests (-1: unknown).
func (p *replayProgress) unit(n int64, passes int) *unitTicker {
	if p == nil || p.rep == nil {
		return nil
	}
	return &unitTicker{p: p, n: n, passes: int64(max(passes, 1))}
}

// at records that the current pass is at position pos of its of requests:
// pos/of of the trace's n requests (of requests themselves when n is
// unknown).
func (u *unitTicker) at(pos, of int64) {
	if u == nil || of <= 0 {
		return
	}
	v := pos
	if u.n >= 0 && of != u.n {
		v = int64(float64(pos) / float64(of) * float64(u.n))
	}
	if d := v - u.inPass; d > 0 {
		u.inPass = v
		u.added += d
		u.p.reqs.Add(d)
		u.p.show()
	}
}

// nextPass ends a pass: the rest of its requests count as done.
func (u *unitTicker) nextPass() {
	if u == nil {
		return
	}
	if u.n > u.inPass {
		d := u.n - u.inPass
		u.added += d
		u.p.reqs.Add(d)
	}
	u.inPass = 0
}

// done ends the run: whatever its passes did not report counts as done.
func (u *unitTicker) done() {
	if u == nil {
		return
	}
	if u.n >= 0 {
		if d := u.n*u.passes - u.added; d > 0 {
			u.added += d
			u.p.reqs.Add(d)
		}
	}
	u.p.runs.Add(1)
	u.p.show()
}

// reader counts the requests a streamed pass has read (those a sample
// dropped too) and reports them to a ticker.
type reader struct {
	u    *unitTicker
	src  Source
	n    int64 // the trace's length, -1 when unknown
	read int64
}

// stream feeds every batch of src's keys to fn, reporting the reading to
// tick (nil: no progress).
func stream(ctx context.Context, src Source, tick *unitTicker, fn func(keys []uint64)) error {
	rd := reader{u: tick, src: src, n: src.Len()}
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		fn(src.Keys())
		rd.batch(src.Keys())
	}
	return src.Err()
}

func (r *reader) batch(keys []uint64) {
	if r.u == nil {
		return
	}
	if s, ok := r.src.(*sampledSource); ok {
		r.read = s.read
	} else {
		r.read += int64(len(keys))
	}
	if r.n < 0 {
		r.u.at(r.read, max(r.read, 1)) // unknown length: count requests as read
		return
	}
	r.u.at(r.read, r.n)
}

func (p *replayProgress) finish() { p.rep.Finish() }
