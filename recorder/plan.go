package recorder

import (
	"fmt"
	"slices"
	"time"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// plan is what a crawl's start decided before any node exists: the
// nodes this process runs, the partitioner, the topology and the
// checkpoint to resume from.
type plan struct {
	start      time.Time
	tcp        bool
	total      int
	local      []int // the node ids this process runs
	lock       *outdir.Lock
	seeds      []string // normalized
	filter     *urlfilter.Filter
	part       partition.Partitioner
	topo       peer.Topology
	resumeFrom *checkpoint.Set
	meta       tracefile.Meta
	// epochs are the local nodes' incarnations by id, bumped at every
	// start (none without OutDir): in-process too, a resumed node
	// re-sends its checkpoint's batches in transit under their old ids,
	// and the receivers' batch logs must not take its new batches,
	// numbered from 1 again, for those.
	epochs map[int]uint64
	events *tracefile.EventLog
}

// prepare checks cfg (filling in defaults), locks the crawl directory,
// proves the checkpoint a resume starts from, and saves the configuration
// and topology. A resume of a crawl that has nothing left to do returns
// its Result instead; on error nothing is left locked.
func prepare(cfg *Config) (p *plan, done *Result, err error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = time.Second
	}
	if cfg.SplitterBatch <= 0 {
		cfg.SplitterBatch = 1024
	}
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	tlsConfig, err := cfg.clientTLS()
	if err != nil {
		return nil, nil, err
	}
	cfg.tlsConfig = tlsConfig
	start := cfg.Now()
	tcp := len(cfg.Peers) > 0
	total := cfg.Nodes
	local := make([]int, 0, total)
	if tcp {
		total = len(cfg.Peers)
		local = append(local, cfg.NodeID)
	} else {
		for i := 0; i < total; i++ {
			local = append(local, i)
		}
	}
	lock, err := lockCrawl(cfg, local, tcp)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if p == nil {
			lock.Unlock()
		}
	}()
	created := start
	var resumeFrom *checkpoint.Set
	var savedCfg *Config
	if cfg.Resume {
		sc, err := readSavedConfig(cfg.OutDir, local[0])
		if err != nil {
			return nil, nil, err
		}
		if cfg.CrawlID != "" && cfg.CrawlID != sc.Config.CrawlID {
			return nil, nil, fmt.Errorf("%w: crawl id %q differs from %q, the id of the crawl in %s", ErrConfig, cfg.CrawlID, sc.Config.CrawlID, cfg.OutDir)
		}
		cfg.CrawlID, created, savedCfg = sc.Config.CrawlID, sc.Created, &sc.Config
	} else if crawlIn(cfg.OutDir, local, tcp) {
		return nil, nil, fmt.Errorf("%w: %s already holds a crawl; use --resume to continue it, or another directory", ErrConfig, cfg.OutDir)
	}
	if cfg.CrawlID == "" {
		cfg.CrawlID = start.UTC().Format("20060102T150405Z")
	}
	seeds := make([]string, 0, len(cfg.Seeds))
	for _, s := range cfg.Seeds {
		n, err := urlnorm.Normalize(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: seed %q: %v", ErrConfig, s, err)
		}
		seeds = append(seeds, n)
	}
	filter, err := urlfilter.New(cfg.Filter)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	part, err := partition.New(cfg.Partitioner, total, cfg.Replicas)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	// The epoch files a start bumps are proved before anything is
	// written (config.json, topology.json): a damaged one is an error
	// naming it, and the directory is left as it was.
	if cfg.OutDir != "" {
		for _, id := range local {
			if _, err := peer.ReadEpoch(stateDir(cfg.OutDir, id)); err != nil {
				return nil, nil, err
			}
		}
	}
	// The topology is fixed for the crawl's life (topology.go): saved now
	// on a fresh start, checked on a resume before anything is written.
	topo := topologyOf(cfg, part)
	if err := checkTopology(cfg, local, topo, savedCfg); err != nil {
		return nil, nil, err
	}
	if cfg.Resume {
		// The checkpoints are proved before anything is written, once
		// the topology is known to be the saved one.
		if resumeFrom, err = checkpoint.Find(cfg.OutDir, cfg.CrawlID, local); err != nil {
			return nil, nil, err
		}
		if why := finishedCrawl(cfg, resumeFrom, tcp); why != "" {
			return nil, &Result{Finished: why}, nil
		}
		// So are the segments they list.
		if resumeFrom != nil {
			if err := checkSegments(cfg, resumeFrom); err != nil {
				return nil, nil, err
			}
		}
	}
	meta := tracefile.Meta{CrawlID: cfg.CrawlID, Nodes: total, Partitioner: part.Name(), Created: created}
	for _, id := range local {
		if err := writeSavedConfig(cfg, id, created); err != nil {
			return nil, nil, err
		}
	}
	epochs := map[int]uint64{}
	if cfg.OutDir != "" {
		for _, id := range local {
			if epochs[id], err = peer.BumpEpoch(stateDir(cfg.OutDir, id)); err != nil {
				return nil, nil, err
			}
		}
	}
	var events *tracefile.EventLog
	if tcp {
		if events, err = tracefile.OpenEventLog(tracefile.NodeDir(cfg.OutDir, cfg.NodeID), cfg.NodeID, epochs[cfg.NodeID], cfg.Now); err != nil {
			return nil, nil, err
		}
	}
	return &plan{start: start, tcp: tcp, total: total, local: local, lock: lock, seeds: seeds, filter: filter,
		part: part, topo: topo, resumeFrom: resumeFrom, meta: meta, epochs: epochs, events: events}, nil, nil
}

func lockCrawl(cfg *Config, local []int, tcp bool) (*outdir.Lock, error) {
	if cfg.OutDir == "" {
		return nil, nil
	}
	ids := append([]int(nil), local...)
	if !tcp {
		if all, err := tracefile.CrawlNodes(cfg.OutDir); err == nil {
			for _, id := range all {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	dirs := make([]string, len(ids))
	for i, id := range ids {
		dirs[i] = tracefile.NodeDir(cfg.OutDir, id)
	}
	return outdir.LockCrawl("crawl", cfg.OutDir, dirs, tcp)
}
