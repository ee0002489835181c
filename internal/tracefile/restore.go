package tracefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
)

// Cutting a log back to a checkpoint. A crawl that resumes from a
// checkpoint continues its logs from the position the writers had when it
// was taken ([URLWriter.Checkpoint], [PageWriter.Checkpoint]): rows
// written after it are moved out of the node directory into a discard
// directory, whole, so that no written byte is lost and the log reads as
// if its writer had closed at the checkpoint.

// RestoreLog cuts the log with prefix (of kind, [KindURLs] or
// [KindPages]) in nodeDir back to a checkpointed position: done and open
// as [URLWriter.Checkpoint] returned them. Segments the position does not
// name are moved to discardDir; the open segment, when it held a batch, is
// cut at its checkpointed length with [CutSegmentAt] (the original kept
// in discardDir) and ends cleanly. RestoreLog returns the segments the
// log now holds, for [URLWriter.Continue], and the number of rows moved
// out of it.
//
// The open segment must be at least as long as its checkpointed length,
// and its checkpointed prefix, which is read to cut it anyway, must hash
// to the xxhash64 recorded for it, if any: the cut segment's recorded
// hash is then that of the cut file. A failed check is an [ErrCorrupt]
// error naming the segment and what differs, and the log is left as it
// was. The closed segments are checked by [CheckLog], which a resume
// calls first.
func RestoreLog(nodeDir, prefix, kind string, done []SegmentInfo, open SegmentInfo, discardDir string) ([]SegmentInfo, int64, error) {
	keep := map[string]bool{}
	for _, s := range done {
		keep[s.File] = true
	}
	isOpen := open.File != "" && open.Batches > 0
	var openSum *xxhash.Digest
	if isOpen {
		path := filepath.Join(nodeDir, open.File)
		st, err := os.Stat(path)
		if err != nil {
			return nil, 0, fmt.Errorf("tracefile: segment %s: %w", path, err)
		}
		if st.Size() < open.Bytes {
			return nil, 0, fmt.Errorf("%w: %s: %d bytes, shorter than the %d its checkpoint recorded", ErrCorrupt, path, st.Size(), open.Bytes)
		}
		if open.XXH64 != "" {
			d, err := hashPrefix(path, open.Bytes)
			if err != nil {
				return nil, 0, err
			}
			if got := HashString(d.Sum64()); got != open.XXH64 {
				return nil, 0, fmt.Errorf("%w: %s: xxhash64 mismatch: its first %d bytes hash to %s, the checkpoint records %s", ErrCorrupt, path, open.Bytes, got, open.XXH64)
			}
			openSum = d
		}
		keep[open.File] = true
	}
	paths, err := ListSegments(nodeDir, prefix)
	if err != nil {
		return nil, 0, err
	}
	var dropped int64
	for _, path := range paths {
		if keep[filepath.Base(path)] {
			continue
		}
		rows, err := discardSegment(path, kind, discardDir)
		if err != nil {
			return nil, 0, err
		}
		dropped += rows
	}
	out := append([]SegmentInfo(nil), done...)
	if isOpen {
		path := filepath.Join(nodeDir, open.File)
		dropped += max(0, segmentRows(path, kind)-open.Rows)
		if err := CutSegmentAt(path, open.Bytes, filepath.Join(discardDir, open.File)); err != nil {
			return nil, 0, err
		}
		si := open
		si.Bytes += int64(len(eosMarker))
		si.Clean, si.Error = true, ""
		if openSum != nil {
			// The cut file: the checked prefix and the marker.
			openSum.Write(eosMarker)
			si.XXH64 = HashString(openSum.Sum64())
		}
		out = append(out, si)
	}
	return out, dropped, nil
}

// CheckLog checks the log of node directory nodeDir that a checkpoint
// (named source in errors) records, done and open as
// [URLWriter.Checkpoint] returned them, with [VerifySegment]: each
// segment of done must be there with its recorded size and, with hash
// set, its recorded xxhash64; the open segment, when it held a batch,
// must be at least its checkpointed length and, with hash set, that
// prefix must hash to its recorded xxhash64. Segments recorded without a
// hash (by an older crawltrace) are checked for size only. With hash
// set, it reads every closed segment once. It returns the first failure,
// an [ErrCorrupt] error naming the segment and what differs.
func CheckLog(nodeDir string, done []SegmentInfo, open SegmentInfo, source string, hash bool) error {
	segs := done
	if open.File != "" && open.Batches > 0 {
		open.Clean = false // a prefix
		segs = append(segs[:len(segs):len(segs)], open)
	}
	for _, s := range segs {
		if _, err := VerifySegment(filepath.Join(nodeDir, s.File), s, source, hash); err != nil {
			return err
		}
	}
	return nil
}

// DiscardLog moves every segment of the log with prefix (of kind) in
// nodeDir to discardDir, for a crawl that starts again from its seeds,
// and returns the number of rows moved. A nodeDir that does not exist
// holds no segment.
func DiscardLog(nodeDir, prefix, kind, discardDir string) (int64, error) {
	paths, err := ListSegments(nodeDir, prefix)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, path := range paths {
		rows, err := discardSegment(path, kind, discardDir)
		if err != nil {
			return n, err
		}
		n += rows
	}
	return n, nil
}

// discardSegment moves the segment at path into dir (created if need be)
// and returns the rows it holds.
func discardSegment(path, kind, dir string) (int64, error) {
	rows := segmentRows(path, kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("tracefile: %w", err)
	}
	if err := os.Rename(path, filepath.Join(dir, filepath.Base(path))); err != nil {
		return 0, fmt.Errorf("tracefile: %w", err)
	}
	return rows, nil
}

// segmentRows counts the rows a segment holds (0 when it holds none or
// cannot be read).
func segmentRows(path, kind string) int64 {
	s, err := OpenSegment(path, kind)
	if err != nil {
		return 0
	}
	defer s.Close()
	for s.Next() {
	}
	return s.Info().Rows
}
