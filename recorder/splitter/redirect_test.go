package splitter

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// testRedirects is the crawl's redirect-hop table: hop counts by target.
type testRedirects map[string]int

func (r testRedirects) Forget(u string) { delete(r, u) }

// The redirect-hop table keeps only targets this node will fetch: a target
// the DUE knew, or another node owns, is forgotten at the splitter (the
// table filled up with them, and past its bound --max-redirects was off).
func TestRedirectTargetsForgottenWhenNotQueued(t *testing.T) {
	part, _ := partition.New("host", 2, 0)
	chains := testRedirects{}
	s := &Splitter{node: 0, part: part, tr: peer.NewTracker(), due: due.NewMemory(1 << 10), front: &testFrontier{},
		out: make([]*peer.Batch, 2), batchSize: 1 << 30, now: time.Now, redirs: chains}
	var local, remote string
	for i := 0; local == "" || remote == ""; i++ {
		u := fmt.Sprintf("http://h%d.test/r", i)
		if s.dest(u) == 0 && local == "" {
			local = u
		} else if s.dest(u) == 1 && remote == "" {
			remote = u
		}
	}
	for _, u := range []string{local, remote} {
		chains[u] = 1
	}
	s.process(&Msg{URLs: []URL{{URL: local, Kind: tracefile.URLRedirect}, {URL: remote, Kind: tracefile.URLRedirect}}})
	if len(chains) != 1 || chains[local] != 1 {
		t.Fatalf("after routing: %v; want only the queued local target", chains)
	}
	// The same target again, known to the DUE now: forgotten.
	chains[local] = 2
	s.process(&Msg{URLs: []URL{{URL: local, Kind: tracefile.URLRedirect}}})
	if len(chains) != 0 {
		t.Fatalf("a target the DUE knew is still remembered: %v", chains)
	}
}
