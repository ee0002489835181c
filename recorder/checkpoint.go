package recorder

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// # Checkpoints
//
// A checkpoint is a node's whole crawl state at a consistent cut, enough
// to continue the crawl after kill -9 ([Config.Resume]). It is one
// directory, OutDir/node-NNN/state/checkpoint/, holding one file per
// [checkpointPart] (named by the part) and checkpoint.json:
//
//	{"format": "crawltrace-checkpoint", "version": 1, "crawl_id": ...,
//	 "node": N, "generation": G, "time": ..., "parts": [{"name", "bytes"}]}
//
// The parts the recorder saves:
//
//	segments   gob: per log (URLs, pages) the closed segments, the open
//	           segment's file, byte length (a batch boundary), rows and
//	           batches, and the next URL row sequence number
//	due        the DUE's fingerprints (recorder/due's checkpoint format)
//	frontier   gob: a count, then per server its key, next allowed request
//	           time, robots.txt state ([robotsState]) and queued URLs with
//	           their quality; URLs workers held at the cut come first
//	counters   gob: the node's and its splitter's counters, page id and
//	           batch sequence counters
//	pending    gob: batches sent to this node in this process and not yet
//	           processed at the cut (in-process crawls of several nodes)
//
// Writing: the parts go to state/checkpoint.tmp/, each file synced, then
// checkpoint.json, then the directory. Only then is the current
// checkpoint/ renamed to checkpoint.old/ and checkpoint.tmp/ to
// checkpoint/; checkpoint.old/ is removed once every node of the process
// has switched. A crash at any point leaves a complete checkpoint of some
// generation for every node, and the resume picks the newest generation
// all nodes have (see findCheckpoints).
//
// The cut: a coordinator parks every splitter of the process between two
// messages (workers go on fetching meanwhile; their pages wait in the
// splitter channels), takes the list of batches in transit between them,
// then lets each splitter save its parts on its own goroutine and go on.
// At that point the logs hold exactly what the splitters processed; the
// DUE, the frontier and the pending batches hold the URLs admitted
// from them; URLs workers had taken but whose pages were not yet logged
// are saved as queued, so they are fetched again after a crash. The log
// writers flush and sync their open segment at the cut; a resume cuts the
// open segment back to that length (the original file is kept under
// state/discarded/) and moves segments opened later there too.
const (
	checkpointDirName  = "checkpoint"
	checkpointTmpName  = "checkpoint.tmp"
	checkpointOldName  = "checkpoint.old"
	checkpointMetaName = "checkpoint.json"
	discardedDirName   = "discarded"
	configFileName     = "config.json"

	// CheckpointFormat names the checkpoint format in checkpoint.json.
	CheckpointFormat = "crawltrace-checkpoint"
	// CheckpointVersion is the checkpoint format's version.
	CheckpointVersion = 1
)

// checkpointMeta is checkpoint.json.
type checkpointMeta struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	CrawlID    string          `json:"crawl_id"`
	Node       int             `json:"node"`
	Generation uint64          `json:"generation"`
	Time       time.Time       `json:"time"`
	Parts      []checkpointRef `json:"parts"`
}

type checkpointRef struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// addCheckpointPart registers p to be saved in every checkpoint of n and
// loaded when the crawl resumes. Parts are saved in registration order on
// the splitter's goroutine at the cut, and loaded in the same order before
// the node starts (a part whose file an older checkpoint lacks is left as
// it is). Register parts in newNode, before Run starts the splitter.
func (n *node) addCheckpointPart(p checkpointPart) {
	n.parts = append(n.parts, p)
}

// writeCheckpoint saves every part of n into state/checkpoint.tmp/. It
// runs on the splitter goroutine at a cut (or after the splitter stopped).
func (n *node) writeCheckpoint(gen uint64) error {
	state := stateDir(n.cfg.OutDir, n.id)
	tmp := filepath.Join(state, checkpointTmpName)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	meta := checkpointMeta{Format: CheckpointFormat, Version: CheckpointVersion, CrawlID: n.cfg.CrawlID,
		Node: n.id, Generation: gen, Time: time.Now().UTC()}
	for _, p := range n.parts {
		path := filepath.Join(tmp, p.checkpointName())
		size, err := writeSynced(path, p.saveCheckpoint)
		if err != nil {
			return fmt.Errorf("checkpoint: node %d: %s: %w", n.id, p.checkpointName(), err)
		}
		meta.Parts = append(meta.Parts, checkpointRef{Name: p.checkpointName(), Bytes: size})
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if _, err := writeSynced(filepath.Join(tmp, checkpointMetaName), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("checkpoint: node %d: %w", n.id, err)
	}
	return syncDir(tmp)
}

// writeSynced creates path, fills it through a buffer, syncs and closes
// it, and returns its size.
func writeSynced(path string, fill func(w io.Writer) error) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: f}
	bw := bufio.NewWriterSize(cw, 1<<20)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}

// commitCheckpoint makes node's checkpoint.tmp/ its current checkpoint,
// keeping the previous one as checkpoint.old/.
func commitCheckpoint(outDir string, node int) error {
	state := stateDir(outDir, node)
	cur, old := filepath.Join(state, checkpointDirName), filepath.Join(state, checkpointOldName)
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(cur, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(filepath.Join(state, checkpointTmpName), cur); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return syncDir(state)
}

// readCheckpointMeta reads dir/checkpoint.json; ok is false when dir holds
// no complete checkpoint.
func readCheckpointMeta(dir string) (checkpointMeta, bool) {
	var m checkpointMeta
	b, err := os.ReadFile(filepath.Join(dir, checkpointMetaName))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Format != CheckpointFormat || m.Version != CheckpointVersion {
		return m, false
	}
	return m, true
}

// findCheckpoints returns, for each of nodes, the directory of its
// checkpoint of the newest generation every node has, and that
// generation. It returns no directories when some node has no complete
// checkpoint (a crawl killed before its first one).
func findCheckpoints(outDir string, nodes []int) (map[int]string, uint64, error) {
	type cand struct {
		dir string
		gen uint64
	}
	all := map[int][]cand{}
	var want uint64
	first := true
	for _, id := range nodes {
		state := stateDir(outDir, id)
		best := uint64(0)
		for _, name := range []string{checkpointDirName, checkpointOldName} {
			dir := filepath.Join(state, name)
			if m, ok := readCheckpointMeta(dir); ok && m.Node == id {
				all[id] = append(all[id], cand{dir, m.Generation})
				best = max(best, m.Generation)
			}
		}
		if len(all[id]) == 0 {
			return nil, 0, nil
		}
		if first || best < want {
			want = best
		}
		first = false
	}
	dirs := map[int]string{}
	for _, id := range nodes {
		for _, c := range all[id] {
			if c.gen == want {
				dirs[id] = c.dir
			}
		}
		if dirs[id] == "" {
			return nil, 0, fmt.Errorf("%w: %s: node %d has no checkpoint of generation %d, the newest all nodes share", tracefile.ErrCorrupt, stateDir(outDir, id), id, want)
		}
	}
	return dirs, want, nil
}

// loadCheckpoint loads n's parts from dir, in registration order. A part
// the checkpoint's metadata lists must be there with the size it records
// (a part it does not list, from an older checkpoint, is left as it is).
func (n *node) loadCheckpoint(dir string) error {
	meta, ok := readCheckpointMeta(dir)
	if !ok {
		return fmt.Errorf("%w: checkpoint %s: no readable %s", tracefile.ErrCorrupt, dir, checkpointMetaName)
	}
	size := map[string]int64{}
	for _, r := range meta.Parts {
		size[r.Name] = r.Bytes
	}
	for _, p := range n.parts {
		path := filepath.Join(dir, p.checkpointName())
		want, listed := size[p.checkpointName()]
		if !listed {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
		}
		if st, err := f.Stat(); err != nil || st.Size() != want {
			f.Close()
			return fmt.Errorf("%w: checkpoint %s: not the %d bytes its checkpoint recorded", tracefile.ErrCorrupt, path, want)
		}
		err = p.loadCheckpoint(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
		}
	}
	return nil
}

// barrier is one periodic checkpoint's cut: every splitter parks, the
// coordinator notes the batches in transit, then every splitter saves.
type barrier struct {
	gen     uint64
	parked  sync.WaitGroup
	proceed chan struct{}
	saved   sync.WaitGroup
	mu      sync.Mutex
	err     error
}

// park is run by a splitter that took b from its checkpoint channel.
func (b *barrier) park(n *node) {
	// URLs logged but still in a batch being filled go to the transport
	// now, so the cut finds them in transit.
	n.split.flushPeers()
	b.parked.Done()
	<-b.proceed
	if err := n.writeCheckpoint(b.gen); err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		b.mu.Unlock()
	}
	b.saved.Done()
}

// checkpointer takes the checkpoints of the nodes of one process.
type checkpointer struct {
	c         *crawl
	nodes     []*node
	transport Transport
	gen       uint64
	stop      chan struct{}
	done      chan struct{}
	taken     int
	last      time.Duration // how long the last checkpoint took
}

// run takes a checkpoint every cfg.CheckpointEvery until stopped.
func (k *checkpointer) run(every time.Duration) {
	defer close(k.done)
	if every <= 0 {
		<-k.stop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			if err := k.periodic(); err != nil {
				k.c.fail(err)
				return
			}
		}
	}
}

// periodic takes a checkpoint of every node at one cut while the crawl
// runs.
func (k *checkpointer) periodic() error {
	start := time.Now()
	k.gen++
	b := &barrier{gen: k.gen, proceed: make(chan struct{})}
	b.parked.Add(len(k.nodes))
	b.saved.Add(len(k.nodes))
	// Every splitter takes the barrier: they stop only after the
	// checkpointer has (Run closes k.stop and waits for k.done first).
	// A give-up case here would leave the nodes already parked waiting
	// for a proceed that never comes.
	for _, n := range k.nodes {
		n.split.ckpt <- b
	}
	b.parked.Wait()
	k.snapshotPending()
	close(b.proceed)
	b.saved.Wait()
	if b.err != nil {
		return b.err
	}
	if err := k.commit(); err != nil {
		return err
	}
	k.taken++
	k.last = time.Since(start)
	return nil
}

// final takes the checkpoint of a clean stop, once every splitter has
// drained its channel and closed its segments.
func (k *checkpointer) final() error {
	k.gen++
	k.snapshotPending()
	for _, n := range k.nodes {
		if err := n.writeCheckpoint(k.gen); err != nil {
			return err
		}
	}
	if err := k.commit(); err != nil {
		return err
	}
	k.taken++
	return nil
}

// snapshotPending gives every node's pending part the batches sent to it
// and not processed, while no splitter runs.
func (k *checkpointer) snapshotPending() {
	a, ok := k.transport.(batchAcker)
	for _, n := range k.nodes {
		n.pending.batches = nil
		if ok {
			n.pending.batches = a.unprocessed(n.id)
		}
	}
}

func (k *checkpointer) commit() error {
	for _, n := range k.nodes {
		if err := commitCheckpoint(k.c.cfg.OutDir, n.id); err != nil {
			return err
		}
	}
	for _, n := range k.nodes {
		os.RemoveAll(filepath.Join(stateDir(k.c.cfg.OutDir, n.id), checkpointOldName))
		// The batches this checkpoint covers are durable: their senders
		// may drop them from their outboxes.
		n.split.checkpointed()
	}
	return nil
}
