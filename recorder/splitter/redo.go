package splitter

import (
	"fmt"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Fail-over without loss. A sender deletes a batch from its outbox once
// the receiver's checkpoint covers it, so when the receiver is lost for
// good the URLs it had admitted but not fetched (its frontier) exist
// nowhere else, and the outboxes can no longer route them to the hosts'
// new owners. They are in the senders' URL logs, though: every URL that
// enters a node's host splitter is logged with the node it was routed
// to (dest) before it is sent. So when node d is declared dead, each
// live node streams its own URL log (redo) and routes every URL it had
// routed to d to the URL's owner under the new live set; the new
// owners' DUEs drop what they already have. Together with the seeds d
// owned (admitted again by their new owners, changeView) and the pages
// the new owners fetch again (their DUEs never saw d's URLs), every URL
// d would have reached is reached. A node that rejoins later gets its
// hosts back and resumes from its own checkpoint.

// startRedo flushes this node's URL log and starts streaming it in
// another goroutine, handing the URLs logged for node d back to the
// splitter in chunks (Msg.redo). It runs on the splitter's
// goroutine (changeView); the tracker counts the scan as work until it
// ends, so the crawl cannot be found idle while URLs are still to route.
func (s *Splitter) startRedo(d int) {
	if s.urlw == nil || s.outDir == "" {
		return
	}
	if err := s.urlw.Flush(); err != nil {
		s.fail(err)
		return
	}
	outDir := s.outDir
	chunk := max(s.batchSize, 64)
	s.tr.Add(1)
	go func() {
		defer s.tr.Add(-1)
		scanned, err := redoScan(outDir, s.node, d, chunk, func(urls []string) bool {
			// Counted in the splitter queue's byte budget, like the
			// workers' URLs, until the splitter has routed them.
			var n int64
			for _, u := range urls {
				n += int64(len(u)) + URLOverhead
			}
			s.budget.Acquire(n)
			if !s.Send(&Msg{redo: urls, redoPeer: d, Bytes: n}) {
				s.budget.Release(n)
				return false
			}
			return true
		})
		if err != nil {
			s.Send(&Msg{redoDone: &redoResult{peer: d, err: err}})
			return
		}
		s.Send(&Msg{redoDone: &redoResult{peer: d, urls: scanned}})
	}()
}

// redoResult ends a redo scan: how many URLs it handed back for peer.
type redoResult struct {
	peer int
	urls int64
	err  error
}

// redoScan reads node's URL log in outDir, one batch at a time, and calls
// fn with chunks of at most chunk URLs logged for dest; it stops early
// when fn returns false. It returns the URLs handed to fn.
func redoScan(outDir string, node, dest, chunk int, fn func([]string) bool) (int64, error) {
	r, err := tracefile.OpenNodeURLs(outDir, node)
	if err != nil {
		return 0, fmt.Errorf("recorder: node %d: redo for node %d: %w", node, dest, err)
	}
	defer r.Close()
	var n int64
	buf := make([]string, 0, chunk)
	for r.Next() {
		b := r.Batch()
		for i := range b.Len() {
			if int(b.Dest.Value(i)) != dest {
				continue
			}
			buf = append(buf, strings.Clone(b.URL.Value(i)))
			if len(buf) == chunk {
				n += int64(len(buf))
				if !fn(buf) {
					return n, nil
				}
				buf = make([]string, 0, chunk)
			}
		}
	}
	if len(buf) > 0 {
		n += int64(len(buf))
		fn(buf)
	}
	return n, nil
}

// redone routes a redo chunk for peer to the URLs' current owners
// (admitted here when this node owns them now) and counts them.
func (s *Splitter) redone(peer int, urls []string) {
	if s.redoRouted == nil {
		s.redoRouted = map[int]int64{}
	}
	s.route(urls, false)
	s.redoRouted[peer] += int64(len(urls))
}

// redoFinished logs the end of a redo scan as an event. A scan that could
// not read the log stops the crawl: URLs may be lost otherwise.
func (s *Splitter) redoFinished(r *redoResult) {
	p := r.peer
	ev := tracefile.Event{Event: tracefile.EventRedo, Peer: &p, URLsRerouted: s.redoRouted[p]}
	delete(s.redoRouted, p)
	if r.err != nil {
		ev.Reason = r.err.Error()
		s.fail(r.err)
	}
	s.events.Write(ev)
}
