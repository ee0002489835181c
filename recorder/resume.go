package recorder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// ConfigFormat names a crawl's saved configuration,
// OutDir/node-NNN/state/config.json.
const ConfigFormat = "crawltrace-crawl-config"

// savedConfig is state/config.json: the configuration a crawl was started
// with (fields the crawler cannot save, such as the quality oracle map
// and the clock, are left out) and when it was first started.
type savedConfig struct {
	Format  string    `json:"format"`
	Created time.Time `json:"created"`
	Config  Config    `json:"config"`
}

// LoadConfig returns the configuration saved by the crawl in outDir (as
// node's state; node 0 for an in-process crawl), with OutDir set. A
// resuming caller starts from it and changes what it is given again. It
// fails with ErrConfig when outDir holds no crawl.
func LoadConfig(outDir string, node int) (Config, error) {
	sc, err := readSavedConfig(outDir, node)
	if err != nil {
		return Config{}, err
	}
	cfg := sc.Config
	cfg.OutDir = outDir
	return cfg, nil
}

// readSavedConfig reads and proves node's state/config.json: sealed JSON
// (tracefile.MarshalSealed), its checksum matching, every key known and
// present. Anything else is an error matching tracefile.ErrCorrupt and
// naming the file; so is a file without a checksum (written by a
// crawltrace before config.json carried one: resume such a crawl with
// the build that started it).
func readSavedConfig(outDir string, node int) (*savedConfig, error) {
	path := filepath.Join(stateDir(outDir, node), configFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds no crawl to resume (no %s)", ErrConfig, outDir, path)
	}
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	var sc savedConfig
	if err := tracefile.UnmarshalSealed(path, b, &sc); err != nil {
		return nil, fmt.Errorf("recorder: crawl configuration: %w", err)
	}
	if sc.Format != ConfigFormat {
		return nil, fmt.Errorf("%w: %s: format %q, not a crawltrace crawl configuration", tracefile.ErrCorrupt, path, sc.Format)
	}
	return &sc, nil
}

func writeSavedConfig(cfg *Config, node int, created time.Time) error {
	dir := stateDir(cfg.OutDir, node)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return tracefile.WriteSealedJSON(filepath.Join(dir, configFileName), savedConfig{Format: ConfigFormat, Created: created.UTC(), Config: *cfg})
}

// crawlIn reports whether outDir already holds a crawl for the given
// nodes: a manifest (in-process crawls), or a node directory holding
// segments or saved state.
func crawlIn(outDir string, nodes []int, tcp bool) bool {
	if !tcp {
		if _, err := os.Stat(filepath.Join(outDir, tracefile.ManifestName)); err == nil {
			return true
		}
		if all, err := tracefile.CrawlNodes(outDir); err == nil {
			nodes = all
		}
	}
	for _, id := range nodes {
		dir := tracefile.NodeDir(outDir, id)
		for _, p := range []string{tracefile.PrefixURLs, tracefile.PrefixPages} {
			if segs, _ := tracefile.ListSegments(dir, p); len(segs) > 0 {
				return true
			}
		}
		if _, err := os.Stat(filepath.Join(dir, StateDirName, configFileName)); err == nil {
			return true
		}
	}
	return false
}

// finishedCrawl reports why a crawl resumed from set has nothing left to
// do, or "" when it has.
//
// In one process: its last checkpoint is that of a clean stop on an empty
// frontier, or on a used page budget that cfg does not raise. A crawl
// stopped by --duration (a limit of each run) or by a signal has more to
// do.
//
// A node of a TCP crawl cannot judge from its own frontier: its peers may
// still send it URLs. It is finished when its last checkpoint is the final
// one of a stop on a complete termination decision ("crawl_done": every
// node of the crawl idle and drained, none declared dead, this node's
// outbox emptied) and its outbox holds no batch (an outbox changed since
// would be another crawl's doing; it is resumed as usual). A larger
// --max-pages or --duration does not change that: the crawl had nothing
// left anywhere. See docs/crash-safety.md for why no node records this
// while a peer still has work.
func finishedCrawl(cfg *Config, set *checkpoint.Set, tcp bool) string {
	if set == nil {
		return ""
	}
	if tcp {
		m, ok := set.Meta[cfg.NodeID]
		if !ok || m.Stop != StopDone || !m.CrawlDone || peer.OutboxHolds(filepath.Join(stateDir(cfg.OutDir, cfg.NodeID), outboxDirName)) {
			return ""
		}
		return fmt.Sprintf("node %d: every node of the crawl was idle with nothing left to fetch or send; the crawl is finished", cfg.NodeID)
	}
	var stop string
	var attempts int64
	first := true
	for _, m := range set.Meta {
		if first {
			stop, first = m.Stop, false
		} else if m.Stop != stop {
			return ""
		}
		attempts += m.Attempts
	}
	switch {
	case stop == StopDone:
		return StopText(stop, 0, 0) + "; the crawl is finished"
	case stop == StopMaxPages && cfg.MaxPages > 0 && attempts >= cfg.MaxPages:
		return fmt.Sprintf("the budget of %d pages (--max-pages) was used; give a larger --max-pages to continue the crawl", cfg.MaxPages)
	}
	return ""
}

// outboxDirName is a TCP node's outbox, state/outbox/.
const outboxDirName = "outbox"
