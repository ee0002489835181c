package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/countio"
)

// Write saves parts, in order, as the checkpoint m describes into
// state/checkpoint.tmp/ of node m.Node under the crawl directory outDir,
// replacing whatever was there, and returns its description as written.
// It sets m's Format, Version and Parts; the caller sets the rest. Every
// file is synced, then the directory; the checkpoint becomes the node's
// current one only at [Commit]. Write and Commit may run at the same
// time for different nodes, not for one node.
func Write(outDir string, m Meta, parts []Part) (Meta, error) {
	tmp := filepath.Join(StateDir(outDir, m.Node), TmpName)
	if err := os.RemoveAll(tmp); err != nil {
		return m, fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return m, fmt.Errorf("checkpoint: %w", err)
	}
	m.Format, m.Version, m.Parts = Format, Version, nil
	for _, p := range parts {
		path := filepath.Join(tmp, p.Name())
		size, sum, err := writeSynced(path, p.Save)
		if err != nil {
			return m, fmt.Errorf("checkpoint: node %d: %s: %w", m.Node, p.Name(), err)
		}
		m.Parts = append(m.Parts, Ref{Name: p.Name(), Bytes: size, XXH64: hexSum(sum)})
	}
	b := encodeMeta(m)
	if _, _, err := writeSynced(filepath.Join(tmp, MetaName), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return m, fmt.Errorf("checkpoint: node %d: %w", m.Node, err)
	}
	return m, syncDir(tmp)
}

// writeSynced creates path, fills it through a buffer, syncs and closes
// it, and returns its size and the xxhash64 of its bytes.
func writeSynced(path string, fill func(w io.Writer) error) (int64, uint64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	h := xxhash.New()
	cw := &countio.Writer{W: io.MultiWriter(f, h)}
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
	return cw.N, h.Sum64(), err
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

// Commit makes node's state/checkpoint.tmp/ (complete, from [Write]) its
// current checkpoint, keeping the previous one as checkpoint.old/, and
// syncs the state directory.
func Commit(outDir string, node int) error {
	state := StateDir(outDir, node)
	cur, old := filepath.Join(state, DirName), filepath.Join(state, OldName)
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(cur, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(filepath.Join(state, TmpName), cur); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return syncDir(state)
}

// RemoveOld removes node's previous checkpoint, state/checkpoint.old/.
// Call it once every node of the process has committed the next one.
func RemoveOld(outDir string, node int) error {
	return os.RemoveAll(filepath.Join(StateDir(outDir, node), OldName))
}
