package tracefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
)

// Raw segments carry no checksum of their own (an IPC stream has no
// footer to hold one, and it is written before its end is known).
// Instead their writer hashes every byte it writes (xxhash64, streaming)
// and reports the size and hash in the [SegmentInfo] of the segment when
// it closes it, and of the open segment's prefix at a checkpoint. The
// manifest and the recorder's checkpoints record those SegmentInfos:
// [VerifySegment] checks a file against them (crawltrace inspect --verify
// of a crawl directory, and every resume).

// HashString formats an xxhash64 as [SegmentInfo.XXH64] holds it: 16
// lowercase hex digits.
func HashString(sum uint64) string { return fmt.Sprintf("%016x", sum) }

// SegmentCheck is what [VerifySegment] checked.
type SegmentCheck int

const (
	// SegmentHashOK: the segment's first Bytes bytes hash to the
	// recorded xxhash64 (and its size is right).
	SegmentHashOK SegmentCheck = iota
	// SegmentSizeOK: its size is right; the hash was not checked (none
	// recorded, or not asked for).
	SegmentSizeOK
)

// VerifySegment checks the segment at path against want, what source
// (manifest.json, a checkpoint: named in errors) records of it. A segment
// that ended cleanly must be exactly want.Bytes long, any other (the open
// segment of a checkpoint) at least that long. With hash set and a
// recorded want.XXH64, its first want.Bytes bytes are read once, a block
// at a time, and must hash to it. A missing file, a wrong size or a
// mismatch is an error wrapping [ErrCorrupt] naming the file and what
// differs.
func VerifySegment(path string, want SegmentInfo, source string, hash bool) (SegmentCheck, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: %s: missing: %s lists it (%d bytes)", ErrCorrupt, path, source, want.Bytes)
	}
	if err != nil {
		return 0, InputError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("tracefile: %w", err)
	}
	if size := st.Size(); (want.Clean && size != want.Bytes) || size < want.Bytes {
		return 0, fmt.Errorf("%w: %s: %d bytes, %s records %d", ErrCorrupt, path, size, source, want.Bytes)
	}
	if !hash || want.XXH64 == "" {
		return SegmentSizeOK, nil
	}
	d, err := hashPrefix(path, want.Bytes)
	if err != nil {
		return 0, err
	}
	if got := HashString(d.Sum64()); got != want.XXH64 {
		what := "its"
		if !want.Clean {
			what = "its first"
		}
		return 0, fmt.Errorf("%w: %s: xxhash64 mismatch: %s %d bytes hash to %s, %s records %s", ErrCorrupt, path, what, want.Bytes, got, source, want.XXH64)
	}
	return SegmentHashOK, nil
}

// hashPrefix returns the digest of the first n bytes of the file at path.
func hashPrefix(path string, n int64) (*xxhash.Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	defer f.Close()
	d := xxhash.New()
	if _, err := io.CopyBuffer(d, io.NewSectionReader(f, 0, n), make([]byte, 1<<20)); err != nil {
		return nil, fmt.Errorf("tracefile: read %s: %w", path, err)
	}
	return d, nil
}

// A RecordedSegment is a raw segment as its crawl directory records it:
// the [SegmentInfo] its writer reported, and where that is recorded
// (manifest.json, a checkpoint), for messages.
type RecordedSegment struct {
	Path   string
	Info   SegmentInfo
	Source string
}

// ManifestSegments lists the segments the manifest.json of the crawl
// directory dir records, or none when dir is not a directory or has no
// manifest. A manifest that cannot be read is an error naming it.
func ManifestSegments(dir string) ([]RecordedSegment, error) {
	if st, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil || st.IsDir() {
		return nil, nil
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(dir, ManifestName)
	var out []RecordedSegment
	for _, n := range m.NodeInfo {
		nd := NodeDir(dir, n.Node)
		for _, list := range [][]SegmentInfo{n.URLSegments, n.PageSegments} {
			for _, si := range list {
				out = append(out, RecordedSegment{Path: filepath.Join(nd, si.File), Info: si, Source: src})
			}
		}
	}
	return out, nil
}

// verifyRecorded checks the segment at path against what r records and
// says what was found.
func verifyRecorded(path string, r RecordedSegment) (string, error) {
	check, err := VerifySegment(path, r.Info, r.Source, true)
	if err != nil {
		return "", err
	}
	switch {
	case check == SegmentHashOK && r.Info.Clean:
		return fmt.Sprintf("raw segment: size and xxhash64 OK (%d bytes, %d rows, as %s records)", r.Info.Bytes, r.Info.Rows, r.Source), nil
	}
	state, err := readSegment(path)
	if err != nil {
		return "", err
	}
	if check == SegmentHashOK {
		// The open segment of a checkpoint: its rows after the
		// checkpointed prefix are recorded nowhere yet.
		return fmt.Sprintf("raw segment: xxhash64 of its first %d bytes OK (as %s records), the rest read: %s", r.Info.Bytes, r.Source, state), nil
	}
	return fmt.Sprintf("raw segment (size OK, no xxhash64 recorded in %s: unchecked): %s", r.Source, state), nil
}
