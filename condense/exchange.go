package condense

import (
	"context"
	"sync/atomic"

	"github.com/crawltrace/crawltrace/internal/prefetch"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Each part of the aggTable is owned by one map worker, which makes every
// lookup in it: a worker looks up the rows of its batch whose part it owns
// and hands the others, by reference, to their parts' owners (an aggJob),
// then serves the jobs handed to it until its own are done. A part's
// slots, lock and copies are then touched by one core only, where two
// workers taking every part's lock and writing its slots moved those cache
// lines between the cores on nearly every lookup (on uniform 10M the
// parts' locks were 13% of the CPU samples, the Go scheduler's functions
// that the waiting workers' Gosched calls ran 4%; docs/benchmarks.md,
// "Parts owned by one worker each"). The locks stay, uncontended, for
// aggTable.size, which moves every part.

// aggJob is the rows of one batch that a worker hands to the owner of
// their parts: the batch stays valid (its worker does not read on) until
// done is closed, and the owner sets locs, one per row, to where each
// row's copy is (0: the table refused the URL; the worker spills it).
type aggJob struct {
	b    *tracefile.URLColumns
	fps  []uint64 // the batch's fingerprints, by row
	rows []int32
	node int
	locs []uint64
	done chan struct{}
}

// owner is the worker that owns fp's part.
func (m *mapper) owner(fp uint64) int {
	return int(m.agg.hash(fp)>>(64-aggPartBits)) % len(m.inbox)
}

// exchanging reports whether the workers hand rows to their parts'
// owners: a table with more than one worker.
func (m *mapper) exchanging() bool { return m.agg != nil && len(m.inbox) > 1 }

// startExchange sets up the workers' inboxes for workers workers.
func (m *mapper) startExchange(workers int) {
	if m.agg == nil || workers < 2 {
		return
	}
	m.inbox = make([]chan *aggJob, workers)
	for w := range m.inbox {
		// A worker that finds an inbox full serves its own while it
		// waits (see hand), so no size is too small; this one seldom
		// fills.
		m.inbox[w] = make(chan *aggJob, 64)
	}
	m.allDone = make(chan struct{})
	m.active.Store(int32(workers))
}

// serve makes the lookups of job j in the parts worker w owns, pipelined
// as aggBatch's: a block's slots are prefetched, a block later the copies
// they point at, and a block later still its rows are added.
func (m *mapper) serve(w int, j *aggJob, addrs []uintptr) []uintptr {
	const blk = prefetchBlock
	n := len(j.rows)
	nb := (n + blk - 1) / blk
	for b := 0; b < nb+2; b++ {
		addrs = addrs[:0]
		if b < nb {
			addrs = m.agg.slotAddrs(j.fps, j.rows[b*blk:min(b*blk+blk, n)], addrs)
		}
		if s := b - 1; s >= 0 && s < nb {
			addrs = m.agg.urlAddrs(j.b, j.fps, j.rows[s*blk:min(s*blk+blk, n)], addrs)
		}
		prefetch.Addrs(addrs)
		if a := b - 2; a >= 0 {
			for k := a * blk; k < min(a*blk+blk, n); k++ {
				i := j.rows[k]
				loc, ok := m.agg.add(w, j.fps[i], j.node, j.b.URL(int(i)))
				if !ok {
					loc = 0
				}
				j.locs[k] = loc
			}
		}
	}
	close(j.done)
	return addrs
}

// jobRows is the rows a worker gathers for one owner before it hands them
// over, in the middle of a batch, so that the owner can look them up
// while the worker reads on; pollBlocks is how many blocks of its own
// rows a worker looks up between looks at its inbox.
const jobRows, pollBlocks = 2048, 8

// hand hands ws's rows of batch b for worker o's parts to o, and returns
// the job. Until the job is done ws keeps b and fps as they are.
func (m *mapper) hand(ws *workerState, o int, b *tracefile.URLColumns, fps []uint64, node int) *aggJob {
	rows := ws.out[o]
	ws.out[o] = make([]int32, 0, jobRows)
	testHanded.Add(int64(len(rows)))
	j := &aggJob{b: b, fps: fps, rows: rows, node: node, locs: make([]uint64, len(rows)), done: make(chan struct{})}
	for {
		select {
		case m.inbox[o] <- j:
			return j
		case in := <-m.inbox[ws.id]:
			ws.saddrs = m.serve(ws.id, in, ws.saddrs)
		}
	}
}

// testHanded counts the rows handed to other workers, for tests.
var testHanded atomic.Int64

// poll serves the jobs in ws's inbox, if any.
func (m *mapper) poll(ws *workerState) {
	for {
		select {
		case in := <-m.inbox[ws.id]:
			ws.saddrs = m.serve(ws.id, in, ws.saddrs)
		default:
			return
		}
	}
}

// await serves worker w's inbox until every job in jobs is done.
func (m *mapper) await(ctx context.Context, ws *workerState, jobs []*aggJob) error {
	for _, j := range jobs {
		for done := false; !done; {
			select {
			case <-j.done:
				done = true
			case in := <-m.inbox[ws.id]:
				ws.saddrs = m.serve(ws.id, in, ws.saddrs)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// drain has a worker that has read all its units serve the others' jobs
// until every worker has.
func (m *mapper) drain(ctx context.Context, ws *workerState) error {
	if !m.exchanging() {
		return nil
	}
	if m.active.Add(-1) == 0 {
		close(m.allDone)
	}
	for {
		select {
		case in := <-m.inbox[ws.id]:
			ws.saddrs = m.serve(ws.id, in, ws.saddrs)
		case <-m.allDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
