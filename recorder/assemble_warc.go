package recorder

// The root's glue for package warcout: a node's WARC series built from
// Config, the workers' captures turned into its exchanges, and its
// checkpoint part.

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/warcout"
)

// newWARC makes node n's WARC writer when cfg asks for one.
func (n *node) newWARC() {
	cfg := n.cfg
	if !cfg.WARC {
		return
	}
	o := warcout.DefaultOptions()
	o.Dir = filepath.Join(tracefile.NodeDir(cfg.OutDir, n.id), warcout.DirName)
	o.Prefix = fmt.Sprintf("%s-node%03d", cfg.CrawlID, n.id)
	if cfg.WARCFileBytes > 0 {
		o.MaxFileBytes = cfg.WARCFileBytes
	}
	if cfg.Memory > 0 {
		// Exchanges waiting to be written take at most a sixteenth of
		// the budget.
		o.QueueBytes = max(1<<20, min(o.QueueBytes, cfg.Memory/16))
	}
	o.Software = "crawltrace/" + tracefile.ToolVersion
	o.Info = [][2]string{{"isPartOf", cfg.CrawlID}, {"description", fmt.Sprintf("crawltrace crawl %s, node %d of %d", cfg.CrawlID, n.id, n.meta.Nodes)},
		{"http-header-user-agent", cfg.UserAgent}, {"robots", "obey (agent " + n.agent + ")"}}
	o.OnError = n.c.fail
	n.warc = warcout.New(o)
	n.addCheckpointPart(n.warc.Part(n.discardDir, func(cut int64) {
		n.resume.DiscardedWARCBytes += cut
		n.warcRestored = true
	}))
}

// startWARC starts node n's WARC writer once its state is loaded: a
// series its checkpoint did not restore (a fresh crawl, a resume with no
// checkpoint or one taken without --warc) keeps none of the files in its
// directory.
func (n *node) startWARC() error {
	if n.warc == nil {
		return nil
	}
	if !n.warcRestored {
		moved, err := n.warc.Restore(nil, n.discardDir)
		if err != nil {
			return fmt.Errorf("recorder: node %d: %w", n.id, err)
		}
		n.resume.DiscardedWARCBytes += moved
	}
	n.warc.Start()
	return nil
}

// closeWARC writes what is queued and closes node n's WARC files.
func (n *node) closeWARC() error {
	if n.warc == nil {
		return nil
	}
	if err := n.warc.Close(); err != nil {
		return fmt.Errorf("recorder: node %d: %w", n.id, err)
	}
	return nil
}

// archive is the workers' Options.Archive: nil without WARC.
func (n *node) archive() func(c *fetch.Capture, u string, start time.Time, page uint64) func() {
	w := n.warc
	if w == nil {
		return nil
	}
	return func(c *fetch.Capture, u string, start time.Time, page uint64) func() {
		ex := &warcout.Exchange{URL: u, Time: start, PageID: page, IP: c.IP, Request: c.Request,
			Response: c.Response, Body: c.Body, Truncated: c.Truncated, Compressed: c.Encoded}
		w.Reserve(ex.Size())
		return func() { w.Add(ex) }
	}
}
