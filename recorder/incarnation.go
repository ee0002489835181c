package recorder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// epochFile holds a node's incarnation number in its state directory.
const epochFile = "epoch"

// crawlIDFile holds the crawl id a node was started with, so a restarted
// node (--resume) continues the same crawl before any manifest exists.
const crawlIDFile = "crawl-id"

// bumpEpoch reads the node's last incarnation from dir/epoch (0 when
// absent), writes the next one atomically and returns it. Every start of a
// node, fresh or resumed, is a new incarnation: batch ids carry it, so
// receivers never take a restarted node's batches for ones they processed.
func bumpEpoch(dir string) (uint64, error) {
	var last uint64
	b, err := os.ReadFile(filepath.Join(dir, epochFile))
	switch {
	case err == nil:
		last, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("recorder: %s: bad epoch %q", filepath.Join(dir, epochFile), strings.TrimSpace(string(b)))
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return 0, fmt.Errorf("recorder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("recorder: %w", err)
	}
	next := last + 1
	err = tracefile.WriteFileAtomic(filepath.Join(dir, epochFile), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%d\n", next)
		return err
	})
	return next, err
}

// resumeIdentity settles the crawl id of a node started with
// Config.Resume: the id it was first started with (state/crawl-id), else
// the id in OutDir/manifest.json, else cfg.CrawlID. A fresh start records
// cfg.CrawlID there. Segments of a resumed node continue after the ones
// already in its directory (tracefile numbers new segments after existing
// ones), so nothing written before the restart is overwritten.
func resumeIdentity(cfg *Config, dir string) error {
	p := filepath.Join(dir, crawlIDFile)
	if cfg.Resume {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) != "" {
			cfg.CrawlID = strings.TrimSpace(string(b))
			return nil
		}
		if m, err := tracefile.ReadManifest(cfg.OutDir); err == nil && m.CrawlID != "" {
			cfg.CrawlID = m.CrawlID
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return tracefile.WriteFileAtomic(p, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, cfg.CrawlID)
		return err
	})
}
