package recorder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// # Checkpoints
//
// A checkpoint is a node's whole crawl state at a consistent cut, enough
// to continue the crawl after kill -9 ([Config.Resume]). It is one
// directory, OutDir/node-NNN/state/checkpoint/, holding one file per
// [checkpointPart] (named by the part) and checkpoint.json:
//
//	{"format": "crawltrace-checkpoint", "version": 2, "crawl_id": ...,
//	 "node": N, "generation": G, "time": ..., "stop": "done",
//	 "fetch_attempts": A,
//	 "parts": [{"name", "bytes", "xxhash64"}], "checksum": "..."}
//
// Every part is recorded with its size and the xxhash64 of its bytes (16
// hex digits); "checksum" is the xxhash64 of checkpoint.json itself, taken
// with the checksum's own 16 digits written as zeros. "stop" and
// "fetch_attempts" are set by the checkpoint of a clean stop: the reason
// the crawl stopped and the fetches it had made (resuming a finished crawl
// does nothing, see finishedCrawl). "crawl_done" is set by the final
// checkpoint of a node of a TCP crawl that stopped because the whole crawl
// was over: every node idle and drained, none declared dead, nothing left
// in its outbox.
//
// Loading proves a checkpoint before using it (verifyCheckpoint): the
// checksum of checkpoint.json, then each part's size and xxhash64, for
// every node, before any part is loaded (loading the segments part moves
// rows to state/discarded/). A checkpoint that does not prove itself is an
// error naming the file (tracefile.ErrCorrupt); the resume does not fall
// back to an older checkpoint, nor start the crawl again (see
// docs/crash-safety.md for why).
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
	// CheckpointVersion is the checkpoint format's version (2: parts and
	// checkpoint.json checksummed).
	CheckpointVersion = 2
)

// checkpointMeta is checkpoint.json.
type checkpointMeta struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	CrawlID    string    `json:"crawl_id"`
	Node       int       `json:"node"`
	Generation uint64    `json:"generation"`
	Time       time.Time `json:"time"`
	Stop       string    `json:"stop,omitempty"`
	Attempts   int64     `json:"fetch_attempts,omitempty"`
	// CrawlDone: set by the final checkpoint of a TCP node that stopped
	// on a complete termination decision with nothing left for its peers
	// (see finishedCrawl).
	CrawlDone bool            `json:"crawl_done,omitempty"`
	Parts     []checkpointRef `json:"parts"`
	Checksum  string          `json:"checksum"` // last: see encodeCheckpointMeta
}

type checkpointRef struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	XXH64 string `json:"xxhash64"`
}

// maxMetaBytes bounds the checkpoint.json a resume reads.
const maxMetaBytes = 1 << 20

// zeroSum is a checksum's place holder while checkpoint.json is hashed.
const zeroSum = "0000000000000000"

func hexSum(v uint64) string { return fmt.Sprintf("%016x", v) }

// encodeCheckpointMeta renders m as checkpoint.json, with its checksum.
func encodeCheckpointMeta(m checkpointMeta) []byte {
	m.Checksum = zeroSum
	b, _ := json.MarshalIndent(m, "", "  ")
	b = append(b, '\n')
	field := []byte(`"checksum": "` + zeroSum + `"`)
	i := bytes.LastIndex(b, field)
	copy(b[i+len(field)-1-len(zeroSum):], hexSum(xxhash.Sum64(b)))
	return b
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
func (n *node) writeCheckpoint(gen uint64, stop string) error {
	state := stateDir(n.cfg.OutDir, n.id)
	tmp := filepath.Join(state, checkpointTmpName)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	meta := checkpointMeta{Format: CheckpointFormat, Version: CheckpointVersion, CrawlID: n.cfg.CrawlID,
		Node: n.id, Generation: gen, Time: time.Now().UTC(), Stop: stop}
	if stop != "" {
		meta.Attempts = n.st.attempts.Load()
		meta.CrawlDone = n.c.crawlDone
	}
	for _, p := range n.parts {
		path := filepath.Join(tmp, p.checkpointName())
		size, sum, err := writeSynced(path, p.saveCheckpoint)
		if err != nil {
			return fmt.Errorf("checkpoint: node %d: %s: %w", n.id, p.checkpointName(), err)
		}
		meta.Parts = append(meta.Parts, checkpointRef{Name: p.checkpointName(), Bytes: size, XXH64: hexSum(sum)})
	}
	b := encodeCheckpointMeta(meta)
	if _, _, err := writeSynced(filepath.Join(tmp, checkpointMetaName), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("checkpoint: node %d: %w", n.id, err)
	}
	return syncDir(tmp)
}

// writeSynced creates path, fills it through a buffer, syncs and closes
// it, and returns its size and the xxhash64 of its bytes.
func writeSynced(path string, fill func(w io.Writer) error) (int64, uint64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	h := xxhash.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
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
	return cw.n, h.Sum64(), err
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

// readCheckpointMeta reads dir/checkpoint.json and checks its checksum,
// format and node. A missing file is an error matching fs.ErrNotExist;
// anything else wrong with it matches tracefile.ErrCorrupt and names it.
func readCheckpointMeta(dir string, node int) (checkpointMeta, error) {
	var m checkpointMeta
	path := filepath.Join(dir, checkpointMetaName)
	f, err := os.Open(path)
	if err != nil {
		return m, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	// A few hundred bytes; a file far larger is not one, and is not read
	// whole.
	b, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
	f.Close()
	bad := func(why string, args ...any) (checkpointMeta, error) {
		return m, fmt.Errorf("%w: checkpoint %s: %s", tracefile.ErrCorrupt, path, fmt.Sprintf(why, args...))
	}
	if err != nil {
		return bad("%v", err)
	}
	if len(b) > maxMetaBytes {
		return bad("larger than %d bytes: not a checkpoint description", maxMetaBytes)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return bad("not a checkpoint description (%v)", err)
	}
	if m.Format != CheckpointFormat {
		return bad("format %q, want %q", m.Format, CheckpointFormat)
	}
	if m.Version != CheckpointVersion {
		return bad("format version %d; this build reads version %d", m.Version, CheckpointVersion)
	}
	field := []byte(`"checksum": "` + m.Checksum + `"`)
	i := bytes.LastIndex(b, field)
	if len(m.Checksum) != len(zeroSum) || i < 0 {
		return bad("no checksum")
	}
	zeroed := bytes.Clone(b)
	copy(zeroed[i+len(field)-1-len(zeroSum):], zeroSum)
	if got := hexSum(xxhash.Sum64(zeroed)); got != m.Checksum {
		return bad("checksum %s, the file records %s: the file is damaged", got, m.Checksum)
	}
	if m.Node != node {
		return bad("written by node %d, not node %d", m.Node, node)
	}
	return m, nil
}

// verifyCheckpoint checks that every part m lists is in dir with the size
// and xxhash64 m records, reading each part once.
func verifyCheckpoint(dir string, m checkpointMeta) error {
	for _, r := range m.Parts {
		path := filepath.Join(dir, r.Name)
		if r.Name != filepath.Base(r.Name) || r.Name == checkpointMetaName {
			return fmt.Errorf("%w: checkpoint %s: part name %q", tracefile.ErrCorrupt, filepath.Join(dir, checkpointMetaName), r.Name)
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
		}
		h := xxhash.New()
		n, err := io.Copy(h, f)
		f.Close()
		switch {
		case err != nil:
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
		case n != r.Bytes:
			return fmt.Errorf("%w: checkpoint %s: %d bytes, not the %d bytes its checkpoint recorded", tracefile.ErrCorrupt, path, n, r.Bytes)
		case hexSum(h.Sum64()) != r.XXH64:
			return fmt.Errorf("%w: checkpoint %s: xxhash64 %s, not the %s its checkpoint recorded: the file is damaged", tracefile.ErrCorrupt, path, hexSum(h.Sum64()), r.XXH64)
		}
	}
	return nil
}

// A checkpointSet is, for the nodes of one process, the checkpoint every
// node resumes from: all of one generation, each proved by
// verifyCheckpoint.
type checkpointSet struct {
	gen  uint64
	dirs map[int]string
	meta map[int]checkpointMeta
}

// findCheckpoints returns, for each of nodes, its checkpoint of the
// newest generation every node has, verified. It returns nil when no
// node has a checkpoint (a crawl killed before its first one), or when
// the only checkpoints are of generation 1 and the nodes that lack theirs
// hold it in checkpoint.tmp/ (a crawl killed while it committed its
// first checkpoint node by node): the crawl then starts again from its
// seeds. Anything else is an error
// naming the file: a checkpoint/ directory without a readable, intact
// checkpoint.json, a checkpoint of another crawl, a node with no
// checkpoint beside nodes that have taken several, a damaged part.
func findCheckpoints(outDir, crawlID string, nodes []int) (*checkpointSet, error) {
	type cand struct {
		dir  string
		meta checkpointMeta
	}
	all := map[int][]cand{}
	oldErr := map[int]error{}
	var missing []int
	var have []int
	maxGen := uint64(0)
	for _, id := range nodes {
		state := stateDir(outDir, id)
		for _, name := range []string{checkpointDirName, checkpointOldName} {
			dir := filepath.Join(state, name)
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			m, err := readCheckpointMeta(dir, id)
			if err != nil {
				if name == checkpointOldName {
					// The previous checkpoint, kept only until every
					// node has committed the next: it may be half
					// removed. It is an error only if it is needed.
					oldErr[id] = err
					continue
				}
				if errors.Is(err, fs.ErrNotExist) {
					err = fmt.Errorf("%w: %v (the directory is only ever renamed into place whole: it was damaged)", tracefile.ErrCorrupt, err)
				}
				return nil, err
			}
			if m.CrawlID != crawlID {
				return nil, fmt.Errorf("%w: checkpoint %s: of crawl %q, not %q, the crawl in %s", tracefile.ErrCorrupt, filepath.Join(dir, checkpointMetaName), m.CrawlID, crawlID, outDir)
			}
			all[id] = append(all[id], cand{dir, m})
			maxGen = max(maxGen, m.Generation)
		}
		if len(all[id]) == 0 {
			missing = append(missing, id)
		} else {
			have = append(have, id)
		}
	}
	if len(have) == 0 {
		return nil, nil
	}
	if len(missing) > 0 {
		firstCommit := maxGen <= 1
		for _, id := range missing {
			// Killed while the first checkpoint was committed node by
			// node: the nodes not yet switched hold it, complete, in
			// checkpoint.tmp/.
			m, err := readCheckpointMeta(filepath.Join(stateDir(outDir, id), checkpointTmpName), id)
			firstCommit = firstCommit && err == nil && m.Generation == 1
		}
		if firstCommit {
			return nil, nil
		}
		id := missing[0]
		why := fmt.Sprintf("no %s", filepath.Join(stateDir(outDir, id), checkpointDirName))
		if err := oldErr[id]; err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("%w: node %d has no checkpoint (%s), while node %d has checkpoint generation %d: its state was lost or damaged", tracefile.ErrCorrupt, id, why, have[0], maxGen)
	}
	want := maxGen
	for _, id := range nodes {
		best := uint64(0)
		for _, c := range all[id] {
			best = max(best, c.meta.Generation)
		}
		want = min(want, best)
	}
	set := &checkpointSet{gen: want, dirs: map[int]string{}, meta: map[int]checkpointMeta{}}
	for _, id := range nodes {
		for _, c := range all[id] {
			if c.meta.Generation == want {
				set.dirs[id], set.meta[id] = c.dir, c.meta
			}
		}
		if set.dirs[id] == "" {
			why := ""
			if err := oldErr[id]; err != nil {
				why = " (" + err.Error() + ")"
			}
			return nil, fmt.Errorf("%w: %s: node %d has no checkpoint of generation %d, the newest all nodes share%s", tracefile.ErrCorrupt, stateDir(outDir, id), id, want, why)
		}
		if err := verifyCheckpoint(set.dirs[id], set.meta[id]); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// loadCheckpoint loads n's parts from dir, described by meta (proved by
// verifyCheckpoint), in registration order. A part the checkpoint's
// metadata does not list is left as it is.
func (n *node) loadCheckpoint(dir string, meta checkpointMeta) error {
	listed := map[string]bool{}
	for _, r := range meta.Parts {
		listed[r.Name] = true
	}
	for _, p := range n.parts {
		path := filepath.Join(dir, p.checkpointName())
		if !listed[p.checkpointName()] {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
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

// park is run by a splitter that took b from its checkpoint channel
// (nodeCut), once it handed the batches being filled to the transport.
func (b *barrier) park(n *node) {
	b.parked.Done()
	<-b.proceed
	if err := n.writeCheckpoint(b.gen, ""); err != nil {
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
	transport peer.Transport
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
		n.split.Checkpoint(nodeCut{b, n})
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
// drained its channel and closed its segments; it records why the crawl
// stopped.
func (k *checkpointer) final() error {
	k.gen++
	k.snapshotPending()
	for _, n := range k.nodes {
		if err := n.writeCheckpoint(k.gen, k.c.reason); err != nil {
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
			n.pending.batches = a.Unprocessed(n.id)
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
		n.split.Checkpointed()
	}
	return nil
}
