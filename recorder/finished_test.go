package recorder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// finishedCrawl over --peers: only a final checkpoint that records a
// complete termination ("crawl_done"), with no unacknowledged batch in the
// outbox, makes a node finished; a stop on done alone (the survivors of a
// lost node) does not, nor does a batch left in the outbox, and a larger
// page budget changes nothing.
func TestFinishedCrawlTCP(t *testing.T) {
	for _, tc := range []struct {
		name     string
		meta     checkpoint.Meta
		outbox   []string // files in state/outbox/
		maxPages int64
		finished bool
	}{
		{"crawl done", checkpoint.Meta{Stop: StopDone, CrawlDone: true}, nil, 0, true},
		{"crawl done, larger budget", checkpoint.Meta{Stop: StopDone, CrawlDone: true, Attempts: 10}, nil, 1000, true},
		{"crawl done, acknowledged batch kept", checkpoint.Meta{Stop: StopDone, CrawlDone: true}, []string{peer.OutboxName(2, 1, 3) + ".r0000000002.acked"}, 0, true},
		{"done without the whole crawl", checkpoint.Meta{Stop: StopDone}, nil, 0, false},
		{"periodic checkpoint", checkpoint.Meta{}, nil, 0, false},
		{"max pages", checkpoint.Meta{Stop: StopMaxPages, Attempts: 10}, nil, 10, false},
		{"batch left in the outbox", checkpoint.Meta{Stop: StopDone, CrawlDone: true}, []string{peer.OutboxName(2, 1, 3)}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := &Config{OutDir: dir, NodeID: 1, MaxPages: tc.maxPages}
			if tc.outbox != nil {
				ob := filepath.Join(stateDir(dir, 1), outboxDirName)
				if err := os.MkdirAll(ob, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, f := range tc.outbox {
					if err := os.WriteFile(filepath.Join(ob, f), []byte("x"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			set := &checkpoint.Set{Meta: map[int]checkpoint.Meta{1: tc.meta}}
			if got := finishedCrawl(cfg, set, true) != ""; got != tc.finished {
				t.Errorf("finished %v, want %v", got, tc.finished)
			}
		})
	}
}
