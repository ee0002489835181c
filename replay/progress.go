package replay

import (
	"io"
	"sync/atomic"

	"github.com/crawltrace/crawltrace/internal/progress"
)

// replayProgress reports runs done of the grid with the request rate, through
// the shared progress reporter (live on a terminal, a line every 10 s in a
// batch job). A nil writer makes it silent.
type replayProgress struct {
	rep  *progress.Reporter
	n    atomic.Int64
	reqs atomic.Int64
}

func newProgress(w io.Writer, total int) *replayProgress {
	return &replayProgress{rep: progress.New(w, "replay", "runs", int64(total))}
}

func (p *replayProgress) done(rows []Row) {
	if p.rep == nil {
		return
	}
	if len(rows) > 0 {
		p.reqs.Add(rows[0].Requests * int64(max(rows[0].Seeds, 1)))
	}
	p.rep.Update(p.n.Add(1), progress.Rate(float64(p.reqs.Load()))+" requests replayed")
}

func (p *replayProgress) finish() { p.rep.Finish() }
