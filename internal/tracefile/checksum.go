package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Condensed traces and results tables carry a checksum of the whole file
// under the crawltrace.checksum schema metadata key of the footer's
// schema: "xxh64:" and 16 hex digits, the xxHash64 of every byte of the
// file, in order, with that value itself read as the placeholder
// checksumPending (same length). It covers the data, the record batches'
// metadata, both schemas and their metadata, the footer and the magic.
// The writers hash the bytes as they write them and patch the value into
// the footer at the end; the leading schema message keeps the
// placeholder. Every full read of a condensed trace ([CondensedReader])
// and [VerifyChecksum] (crawltrace inspect --verify, export) check it.
//
// Files written before the checksum covered the whole file carry the
// xxHash64 of their record batches' bodies only, under the same key: a
// reader whose whole-file hash does not match tries that one, and a file
// it matches is reported as [ChecksumData]. A file of a current
// crawltrace damaged anywhere matches neither (but with probability
// 2^-64). A condensed trace or results table without a checksum is an
// error: a flipped bit in the metadata's vector length can drop the key.

const checksumPrefix = "xxh64:"

// checksumPending is the checksum value of a condensed trace's leading
// schema message, and what the value of the footer's is read as while the
// file is hashed (see above).
const checksumPending = checksumPrefix + "????????????????"

// ChecksumOf formats the checksum of data hashed by d.
func ChecksumOf(d *xxhash.Digest) string { return fmt.Sprintf("%s%016x", checksumPrefix, d.Sum64()) }

// ChecksumState is what [VerifyChecksum] found.
type ChecksumState int

const (
	// ChecksumOK: the file matches the checksum it carries.
	ChecksumOK ChecksumState = iota
	// ChecksumData: the file carries a checksum of its record batches'
	// bodies only (written before the checksum covered the whole file),
	// and its data matches it; its metadata is not covered.
	ChecksumData
)

// hashFile hashes into d the bytes of the file read through r from
// offset from to its end, with the checksum value l locates read as
// checksumPending.
func hashFile(d *xxhash.Digest, r io.ReaderAt, from int64, l fileLayout, buf []byte) error {
	if l.sumAt < from || l.sumLen != int64(len(checksumPending)) {
		return fmt.Errorf("checksum value of %d bytes, want %d", l.sumLen, len(checksumPending))
	}
	if _, err := io.CopyBuffer(d, io.NewSectionReader(r, from, l.sumAt-from), buf); err != nil {
		return err
	}
	d.WriteString(checksumPending)
	end := l.sumAt + l.sumLen
	_, err := io.CopyBuffer(d, io.NewSectionReader(r, end, l.size-end), buf)
	return err
}

// dataSum is the checksum of the record batches' bodies of the file read
// through r: what files written before the whole-file checksum carry.
func dataSum(r io.ReaderAt, l fileLayout, buf []byte) (string, error) {
	d := xxhash.New()
	for _, b := range l.blocks {
		if _, err := io.CopyBuffer(d, io.NewSectionReader(r, b.offset+b.meta, b.body), buf); err != nil {
			return "", err
		}
	}
	return ChecksumOf(d), nil
}

// VerifyChecksum reads the condensed trace or results table at path and
// checks it against the checksum in its metadata. A mismatch, or no
// checksum, is an error wrapping [ErrCorrupt] naming the file. It reads
// the file once (twice for a file whose checksum covers only its data).
func VerifyChecksum(path string) (ChecksumState, error) {
	t, err := openArrowFile(path)
	if err != nil {
		return 0, err
	}
	defer t.Close()
	if _, err := parseMeta(t.r.Schema().Metadata()); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return checkSum(path, t.f, t.layout, 0, nil)
}

// checkSum checks the checksum of the file read through r, whose bytes
// before from d has hashed already (d nil: none).
func checkSum(path string, r io.ReaderAt, l fileLayout, from int64, d *xxhash.Digest) (ChecksumState, error) {
	if l.sumAt < 0 {
		return 0, fmt.Errorf("%w: %s: no checksum in its metadata (written before crawltrace recorded them, or damaged)", ErrCorrupt, path)
	}
	want := make([]byte, l.sumLen)
	if _, err := r.ReadAt(want, l.sumAt); err != nil {
		return 0, fmt.Errorf("tracefile: read %s: %w", path, err)
	}
	if d == nil {
		d, from = xxhash.New(), 0
	}
	buf := make([]byte, min(l.size, 1<<20))
	if err := hashFile(d, r, from, l, buf); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	got := ChecksumOf(d)
	if got == string(want) {
		return ChecksumOK, nil
	}
	if ds, err := dataSum(r, l, buf); err == nil && ds == string(want) {
		return ChecksumData, nil
	}
	return 0, checksumMismatch(path, got, string(want))
}

func checksumMismatch(path, got, want string) error {
	return fmt.Errorf("%w: %s: checksum mismatch: the file hashes to %s, it records %q", ErrCorrupt, path, got, want)
}

// footerPatcher passes writes through to w, hashing them, until capture
// is set; then it keeps them (the footer of an Arrow file: a few KiB)
// until flush, which hashes them and writes them with the checksum in
// place of the footer schema's checksumPending.
type footerPatcher struct {
	w       io.Writer
	sum     *xxhash.Digest
	capture bool
	buf     bytes.Buffer
}

func (p *footerPatcher) Write(b []byte) (int, error) {
	if p.capture {
		return p.buf.Write(b)
	}
	p.sum.Write(b)
	return p.w.Write(b)
}

func (p *footerPatcher) flush() error {
	b := p.buf.Bytes()
	p.sum.Write(b)
	sum := ChecksumOf(p.sum)
	const tail = 4 + len(ipcMagic)
	if len(b) < tail {
		return errors.New("no footer")
	}
	n := int(int32(binary.LittleEndian.Uint32(b[len(b)-tail:])))
	if n <= 0 || n > len(b)-tail {
		return errors.New("no footer")
	}
	f := fbuf{b[len(b)-tail-n : len(b)-tail]}
	root, err := f.root()
	if err != nil {
		return err
	}
	at, l, err := f.metaValueAt(root, metaPrefix+"checksum")
	if err != nil || at < 0 || l != len(sum) || string(f.b[at:at+l]) != checksumPending {
		return errors.New("no checksum placeholder in the footer")
	}
	copy(f.b[at:], sum)
	_, err = p.w.Write(b)
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
	if state == ChecksumData {
		return "checksum of its data OK (written before the checksum covered the whole file: metadata not verifiable)", nil
	}
	return "checksum OK", nil
}
