package recorder

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// RecordedSegments lists what the crawl directory dir records of its raw
// segments, for tracefile.VerifyRecorded (crawltrace inspect --verify):
// its manifest.json's list; for each node the manifest does not list (a
// crawl killed before it wrote one, a node of a --peers crawl that has
// not finished), the node's latest checkpoint (proved first, as a resume
// proves it): the segments the node had closed, and the checkpointed
// prefix of the one it had open. It returns none when dir is not a crawl
// directory, or holds neither. A damaged manifest or checkpoint is an
// error naming it, matching tracefile.ErrCorrupt.
func RecordedSegments(dir string) ([]tracefile.RecordedSegment, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil
	}
	out, err := tracefile.ManifestSegments(dir)
	if err != nil {
		return nil, err
	}
	listed := map[int]bool{}
	if len(out) > 0 {
		m, err := tracefile.ReadManifest(dir)
		if err != nil {
			return nil, err
		}
		for _, nm := range m.NodeInfo {
			listed[nm.Node] = true
		}
	}
	nodes, err := tracefile.CrawlNodes(dir)
	if err != nil {
		return out, nil
	}
	for _, id := range nodes {
		if listed[id] {
			continue
		}
		sc, err := readSavedConfig(dir, id)
		if errors.Is(err, ErrConfig) {
			// An in-process crawl saves its configuration in every
			// node's state; a node without one has no checkpoint.
			continue
		}
		if err != nil {
			return nil, err // damaged: an error naming it
		}
		set, err := checkpoint.Find(dir, sc.Config.CrawlID, []int{id})
		if err != nil {
			return nil, err
		}
		if set == nil {
			continue
		}
		urls, pages, err := splitter.ReadSegmentsPart(set.Dirs[id])
		if err != nil {
			return nil, err
		}
		nd := tracefile.NodeDir(dir, id)
		for _, l := range []splitter.Position{urls, pages} {
			segs := l.Done
			if l.Open.File != "" && l.Open.Batches > 0 {
				segs = append(segs, l.Open)
			}
			for _, si := range segs {
				out = append(out, tracefile.RecordedSegment{Path: filepath.Join(nd, si.File), Info: si, Source: "checkpoint " + set.Dirs[id]})
			}
		}
	}
	return out, nil
}

// checkSegments checks, before a resume writes anything, the segments
// each node's checkpoint in set lists (tracefile.CheckLog): sizes, and
// unless cfg.ResumeSkipHash, xxhash64s. A failure refuses the resume,
// naming the segment.
func checkSegments(cfg *Config, set *checkpoint.Set) error {
	if cfg.NoTrace {
		return nil
	}
	ids := slices.Sorted(maps.Keys(set.Dirs))
	for _, id := range ids {
		urls, pages, err := splitter.ReadSegmentsPart(set.Dirs[id])
		if err != nil {
			return err
		}
		src := "checkpoint " + set.Dirs[id]
		nd := tracefile.NodeDir(cfg.OutDir, id)
		for _, l := range []splitter.Position{urls, pages} {
			if err := tracefile.CheckLog(nd, l.Done, l.Open, src, !cfg.ResumeSkipHash); err != nil {
				return err
			}
		}
	}
	return nil
}
