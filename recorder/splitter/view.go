// The live set: a change of it (fail-over) moves the hosts of nodes that
// left to their next live node, routes what this node holds for them to
// the new owners, and admits the seeds it now owns.

package splitter

import (
	"slices"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// kindForward marks, on the wire only, a URL a node took from its own
// frontier and hands to the host's new owner (fail-over): the receiver
// queues it even if its DUE has seen it.
const kindForward = "forward"

// seeHost remembers u's host, to report the hosts a fail-over moves.
func (s *Splitter) seeHost(u string) {
	h := partition.HostOf(u)
	if _, ok := s.hosts[h]; !ok {
		s.hosts[string([]byte(h))] = struct{}{}
	}
}

// queueTaker is a transport that can give back the batches it holds for a
// node declared dead, to be routed to the new owners.
type queueTaker interface {
	// Take removes and returns every batch held for dest and how many
	// of them were unacknowledged.
	Take(dest int) (batches []*peer.Batch, unacked int)
}

// changeView applies a new set of live nodes (UbiCrawler fail-over): the
// ring restricted to the live ids becomes the assignment, so only the
// hosts of nodes that left move (to the next live point clockwise) and
// hosts come back to a node that rejoins. URLs buffered or queued for a
// node now dead are routed to their new owners; the seeds this node now
// owns are admitted. The change is logged as a reassign event.
func (s *Splitter) changeView(live []bool) {
	if s.ring == nil {
		return
	}
	oldLive := s.live
	var ids []int
	for i, ok := range live {
		if ok {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		return
	}
	old := s.owner.Load()
	next := partition.NewConsistent(ids, s.ring.Replicas())
	s.live = slices.Clone(live)
	s.owner.Store(next)
	var left, joined []int
	for i := range live {
		if oldLive[i] && !live[i] {
			left = append(left, i)
		}
		if !oldLive[i] && live[i] {
			joined = append(joined, i)
		}
	}
	ev := tracefile.Event{Event: tracefile.EventReassign, Live: ids, Left: left, Joined: joined}
	for h := range s.hosts {
		u := "http://" + h + "/"
		a, b := old.Node(u), next.Node(u)
		if a == b {
			continue
		}
		ev.HostsMoved++
		if !slices.Contains(left, a) && !slices.Contains(joined, b) {
			ev.HostsMovedOther++
		}
		if a == s.node {
			ev.HostsOut = append(ev.HostsOut, h)
		}
		if b == s.node {
			ev.HostsIn = append(ev.HostsIn, h)
		}
	}
	slices.Sort(ev.HostsOut)
	slices.Sort(ev.HostsIn)
	before := s.rerouted
	// URLs this node logged for a node now dead are admitted by their new
	// owner's DUE; URLs it forwarded from its own frontier (kindForward)
	// are in its DUE already and must be queued again whatever the DUE
	// says, here or at the new owner, or they are lost.
	var urls, forwarded []string
	take := func(b *peer.Batch) {
		for i, u := range b.URLs {
			if i < len(b.Kinds) && b.Kinds[i] == kindForward {
				forwarded = append(forwarded, u)
			} else {
				urls = append(urls, u)
			}
		}
	}
	for _, d := range left {
		if b := s.out[d]; b != nil {
			take(b)
			if s.clearOut(d) {
				defer s.release() // once its URLs are routed again
			}
		}
		if qt, ok := s.transport.(queueTaker); ok {
			bs, unacked := qt.Take(d)
			for _, b := range bs {
				take(b)
			}
			ev.BatchesTaken += len(bs)
			s.tr.Add(-int64(unacked))
		}
	}
	s.route(urls, false)
	s.route(forwarded, true)
	// The senders' outboxes no longer hold what d admitted and did not
	// fetch: route again every URL this node's log routed to it.
	for _, d := range left {
		s.startRedo(d)
	}
	for _, u := range s.seeds {
		if old.Node(u) != s.node && next.Node(u) == s.node {
			s.admit(u)
		}
	}
	ev.URLsRerouted = s.rerouted - before
	s.events.Write(ev)
}
