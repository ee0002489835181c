package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Condensed traces and results tables carry a checksum of their data under
// the crawltrace.checksum schema metadata key: "xxh64:" and 16 hex digits,
// the xxHash64 of the bodies of the file's record batches (their buffers,
// with Arrow's padding), concatenated in file order. For a condensed trace
// that is its fingerprints as little-endian uint64s. It is computed while
// the file is written and checked by every full read of a condensed trace
// ([CondensedReader]) and by [VerifyChecksum] (crawltrace inspect
// --verify). The checksum covers the data: a damaged footer or schema is
// caught by the structural checks of the readers instead.
//
// A condensed trace is streamed, so its checksum is known only at the end,
// while an Arrow file carries its schema twice: in the schema message at
// its start and in its footer, the one Arrow's file readers use. The
// footer's schema holds the checksum; the leading schema message holds the
// placeholder checksumPending of the same length.

const checksumPrefix = "xxh64:"

// checksumPending is the checksum value of a condensed trace's leading
// schema message (see above).
const checksumPending = checksumPrefix + "????????????????"

// ChecksumOf formats the checksum of data hashed by d.
func ChecksumOf(d *xxhash.Digest) string { return fmt.Sprintf("%s%016x", checksumPrefix, d.Sum64()) }

// ChecksumState is what [VerifyChecksum] found.
type ChecksumState int

const (
	// ChecksumOK: the file's data matches the checksum it carries.
	ChecksumOK ChecksumState = iota
	// ChecksumAbsent: the file carries no checksum (written before
	// checksums existed, or a raw segment, which never has one).
	ChecksumAbsent
)

// VerifyChecksum reads the data of the condensed trace or results table at
// path and checks it against the checksum in its metadata. A file without
// a checksum gives ChecksumAbsent and no error; a mismatch is an error
// wrapping [ErrCorrupt] naming the file. It reads the file once, a block
// at a time.
func VerifyChecksum(path string) (ChecksumState, error) {
	t, err := openArrowFile(path)
	if err != nil {
		return 0, err
	}
	defer t.Close()
	md := t.r.Schema().Metadata()
	want := ""
	if i := md.FindKey(metaPrefix + "checksum"); i >= 0 {
		want = md.Values()[i]
	}
	if want == "" {
		return ChecksumAbsent, nil
	}
	d := xxhash.New()
	buf := make([]byte, 1<<20)
	for _, b := range t.layout.blocks {
		if _, err := io.CopyBuffer(d, io.NewSectionReader(t.f, b.offset+b.meta, b.body), buf); err != nil {
			return 0, fmt.Errorf("tracefile: read %s: %w", path, err)
		}
	}
	if got := ChecksumOf(d); got != want {
		return 0, checksumMismatch(path, got, want)
	}
	return ChecksumOK, nil
}

func checksumMismatch(path, got, want string) error {
	return fmt.Errorf("%w: %s: checksum mismatch: the data hashes to %s, the file records %s", ErrCorrupt, path, got, want)
}

// footerPatcher passes writes through to w until capture is set; then it
// keeps them (the footer of an Arrow file: a few KiB) until flush, which
// replaces the last checksumPending in them by the checksum.
type footerPatcher struct {
	w       io.Writer
	capture bool
	buf     bytes.Buffer
}

func (p *footerPatcher) Write(b []byte) (int, error) {
	if p.capture {
		return p.buf.Write(b)
	}
	return p.w.Write(b)
}

func (p *footerPatcher) flush(sum string) error {
	b := p.buf.Bytes()
	i := bytes.LastIndex(b, []byte(checksumPending))
	if i < 0 || len(sum) != len(checksumPending) {
		return errors.New("no checksum placeholder in the footer")
	}
	copy(b[i:], sum)
	_, err := p.w.Write(b)
	return err
}

// Verify checks the file or every crawltrace file of the directory at
// path, writing one line per file to w: a condensed trace or results table
// against its checksum ([VerifyChecksum]); a raw segment of a crawl
// directory whose manifest.json records its size and xxhash64 against
// them ([VerifySegment]); any other raw segment by reading every batch (a
// cut one is reported, not an error). It returns an error wrapping
// [ErrCorrupt] naming the first file that failed, after checking all of
// them. It is [VerifyRecorded] with what the manifest of the directory at
// path records, if it has one.
func Verify(w io.Writer, path string) error {
	rec, err := ManifestSegments(path)
	if err != nil {
		return err
	}
	return VerifyRecorded(w, path, rec)
}

// VerifyRecorded is [Verify] checking the raw segments rec lists against
// what it records of them: a segment recorded with an xxhash64 must have
// its size and hash (the open segment of a checkpoint: its checkpointed
// prefix must, and the rest is read as an unrecorded segment is); one
// recorded without (by a crawltrace older than the hashes) must have its
// size, is read, and is reported as unchecked, not as an error; a listed
// segment missing from the directory is an error naming it.
func VerifyRecorded(w io.Writer, path string, rec []RecordedSegment) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("verify: %w", InputError(err))
	}
	files := []string{path}
	if st.IsDir() {
		files = nil
		filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, SegmentExt) || strings.HasSuffix(p, ".arrow")) {
				files = append(files, p)
			}
			return nil
		})
		if len(files) == 0 && len(rec) == 0 {
			return fmt.Errorf("%w: %s: no crawltrace files in directory", ErrBadInput, path)
		}
	}
	byPath := map[string]RecordedSegment{}
	for _, r := range rec {
		byPath[filepath.Clean(r.Path)] = r
	}
	seen := map[string]bool{}
	for _, f := range files {
		seen[filepath.Clean(f)] = true
	}
	for _, r := range rec {
		if !seen[filepath.Clean(r.Path)] {
			files = append(files, r.Path) // missing: VerifySegment names it
		}
	}
	var first error
	bad := 0
	for _, f := range files {
		var line string
		var err error
		if r, ok := byPath[filepath.Clean(f)]; ok {
			line, err = verifyRecorded(f, r)
		} else {
			line, err = verifyFile(f)
		}
		if err != nil {
			if len(files) == 1 {
				return err
			}
			bad++
			if first == nil {
				first = err
			}
			line = "FAILED: " + err.Error()
		}
		fmt.Fprintf(w, "%s: %s\n", f, line)
	}
	if first != nil {
		return fmt.Errorf("%d of %d files failed; the first: %w", bad, len(files), first)
	}
	return nil
}

// readSegment reads every batch of the raw segment at path and says how
// it ended.
func readSegment(path string) (string, error) {
	kind := KindURLs
	if strings.HasPrefix(filepath.Base(path), PrefixPages+"-") {
		kind = KindPages
	}
	s, err := OpenSegment(path, kind)
	if IsCutSchema(err) {
		return "CUT before its schema, no rows", nil
	}
	if err != nil {
		return "", err
	}
	defer s.Close()
	for s.Next() {
	}
	info := s.Info()
	if !info.Clean {
		return fmt.Sprintf("%d rows read, CUT: %s", info.Rows, info.Error), nil
	}
	return fmt.Sprintf("%d rows read, ended cleanly", info.Rows), nil
}

// verifyFile checks one file and says what was found.
func verifyFile(path string) (string, error) {
	if strings.HasSuffix(path, SegmentExt) {
		state, err := readSegment(path)
		if err != nil {
			return "", err
		}
		return "raw segment (no checksum): " + state, nil
	}
	if !strings.HasSuffix(path, ".arrow") {
		return "", fmt.Errorf("%w: %s: not a crawltrace file (want .arrows segments, .arrow condensed traces or results tables, or a directory)", ErrBadInput, path)
	}
	state, err := VerifyChecksum(path)
	if err != nil {
		return "", err
	}
	if state == ChecksumAbsent {
		return "no checksum (written before crawltrace recorded them): structure checked, data not verifiable", nil
	}
	return "checksum OK", nil
}
