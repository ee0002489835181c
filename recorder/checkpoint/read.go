package checkpoint

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

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// readMeta reads dir/checkpoint.json and checks its checksum,
// format and node. A missing file is an error matching fs.ErrNotExist;
// anything else wrong with it matches tracefile.ErrCorrupt and names it.
func readMeta(dir string, node int) (Meta, error) {
	var m Meta
	path := filepath.Join(dir, MetaName)
	f, err := os.Open(path)
	if err != nil {
		return m, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	// A few hundred bytes; a file far larger is not one, and is not read
	// whole.
	b, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
	f.Close()
	bad := func(why string, args ...any) (Meta, error) {
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
	if m.Format != Format {
		return bad("format %q, want %q", m.Format, Format)
	}
	if m.Version != Version {
		return bad("format version %d; this build reads version %d", m.Version, Version)
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

// verify checks that every part m lists is in dir with the size
// and xxhash64 m records, reading each part once.
func verify(dir string, m Meta) error {
	for _, r := range m.Parts {
		path := filepath.Join(dir, r.Name)
		if r.Name != filepath.Base(r.Name) || r.Name == MetaName {
			return fmt.Errorf("%w: checkpoint %s: part name %q", tracefile.ErrCorrupt, filepath.Join(dir, MetaName), r.Name)
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

// A Set is, for the nodes of one process, the checkpoint every node
// resumes from: all of one generation, each proved against its
// checkpoint.json ([Find]). It is only read once Find returns it.
type Set struct {
	// Gen is the checkpoints' generation.
	Gen uint64
	// Dirs is each node's checkpoint directory, by node id.
	Dirs map[int]string
	// Meta is each node's checkpoint.json, by node id.
	Meta map[int]Meta
}

// Find returns, for each of nodes, its checkpoint of the newest
// generation every node has, proved: checkpoint.json's checksum, format,
// version, node and crawl id (crawlID), then every part's size and
// xxhash64. It writes nothing. It returns nil when no node has a
// checkpoint (a crawl killed before its first one), or when the only
// checkpoints are of generation 1 and the nodes that lack theirs hold it
// in checkpoint.tmp/ (a crawl killed while it committed its first
// checkpoint node by node): the crawl then starts again from its seeds.
// Anything else is an error naming the file, matching
// tracefile.ErrCorrupt: a checkpoint/ directory without a readable,
// intact checkpoint.json, a checkpoint of another crawl, a node with no
// checkpoint beside nodes that have taken several, a damaged part.
func Find(outDir, crawlID string, nodes []int) (*Set, error) {
	type cand struct {
		dir  string
		meta Meta
	}
	all := map[int][]cand{}
	oldErr := map[int]error{}
	var missing []int
	var have []int
	maxGen := uint64(0)
	for _, id := range nodes {
		state := StateDir(outDir, id)
		for _, name := range []string{DirName, OldName} {
			dir := filepath.Join(state, name)
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			m, err := readMeta(dir, id)
			if err != nil {
				if name == OldName {
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
				return nil, fmt.Errorf("%w: checkpoint %s: of crawl %q, not %q, the crawl in %s", tracefile.ErrCorrupt, filepath.Join(dir, MetaName), m.CrawlID, crawlID, outDir)
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
			m, err := readMeta(filepath.Join(StateDir(outDir, id), TmpName), id)
			firstCommit = firstCommit && err == nil && m.Generation == 1
		}
		if firstCommit {
			return nil, nil
		}
		id := missing[0]
		why := fmt.Sprintf("no %s", filepath.Join(StateDir(outDir, id), DirName))
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
	set := &Set{Gen: want, Dirs: map[int]string{}, Meta: map[int]Meta{}}
	for _, id := range nodes {
		for _, c := range all[id] {
			if c.meta.Generation == want {
				set.Dirs[id], set.Meta[id] = c.dir, c.meta
			}
		}
		if set.Dirs[id] == "" {
			why := ""
			if err := oldErr[id]; err != nil {
				why = " (" + err.Error() + ")"
			}
			return nil, fmt.Errorf("%w: %s: node %d has no checkpoint of generation %d, the newest all nodes share%s", tracefile.ErrCorrupt, StateDir(outDir, id), id, want, why)
		}
		if err := verify(set.Dirs[id], set.Meta[id]); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// Load loads parts, in order, from the checkpoint in dir that m
// describes, which [Find] proved. A part m does not list (one an older
// checkpoint lacks) is left as it is. An error names the part's file and
// matches tracefile.ErrCorrupt.
func Load(dir string, m Meta, parts []Part) error {
	listed := map[string]bool{}
	for _, r := range m.Parts {
		listed[r.Name] = true
	}
	for _, p := range parts {
		path := filepath.Join(dir, p.Name())
		if !listed[p.Name()] {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
		}
		err = p.Load(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", tracefile.ErrCorrupt, path, err)
		}
	}
	return nil
}
