package outdir

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// MergeManifest adds a node's entry (m holds that node) to dir/manifest.json under an
// exclusive file lock, so the processes of a TCP crawl sharing one output
// directory build one manifest. An existing manifest of another crawl id is
// replaced.
func MergeManifest(dir string, m *tracefile.Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("outdir: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, "manifest.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("outdir: %w", err)
	}
	defer lf.Close()
	if err := flock(lf, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("outdir: lock %s: %w", lf.Name(), err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	old, err := tracefile.ReadManifest(dir)
	if err == nil && old.CrawlID == m.CrawlID {
		for _, nm := range old.NodeInfo {
			mine := false
			for _, x := range m.NodeInfo {
				mine = mine || x.Node == nm.Node
			}
			if !mine {
				m.AddNode(nm.Node, nm.URLSegments, nm.PageSegments)
			}
		}
		if old.Created.Before(m.Created) {
			m.Created = old.Created
		}
		if old.Finished.After(m.Finished) {
			m.Finished = old.Finished
		}
	}
	return tracefile.WriteManifest(dir, m)
}
