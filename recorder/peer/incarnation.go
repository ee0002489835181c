package peer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// EpochFile holds a node's incarnation number in its state directory:
// two lines, the epoch in decimal and the xxhash64 (16 lowercase hex
// digits) of the first line, newline included:
//
//	7
//	d9f3b9a2bd0d09b4
//
// A file of the first line alone, as crawltrace wrote it before, is
// read too. No single flipped bit turns the one into the other: a
// newline never becomes a digit.
const EpochFile = "epoch"

// maxEpochBytes bounds what ReadEpoch reads: an epoch file is at most
// 20 digits, a newline, 16 digits and a newline.
const maxEpochBytes = 64

// ReadEpoch reads the node's last incarnation from dir/epoch, 0 when the
// file is absent. A file that is not an epoch, or whose checksum does not
// match, is an error matching tracefile.ErrCorrupt naming it.
func ReadEpoch(dir string) (uint64, error) {
	path := filepath.Join(dir, EpochFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recorder: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxEpochBytes+1))
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("recorder: %w", err)
	}
	bad := func(why string) (uint64, error) {
		return 0, fmt.Errorf("%w: %s: %s", tracefile.ErrCorrupt, path, why)
	}
	if len(b) > maxEpochBytes {
		return bad("not an epoch: too long")
	}
	first, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return bad(fmt.Sprintf("not an epoch: %q", b))
	}
	if len(rest) > 0 {
		sum := tracefile.HashString(xxhash.Sum64(b[:len(first)+1]))
		if string(rest) != sum+"\n" {
			return bad(fmt.Sprintf("its checksum line %q is not the %s of its epoch %q", bytes.TrimSpace(rest), sum, first))
		}
	}
	for _, c := range first {
		if c < '0' || c > '9' {
			return bad(fmt.Sprintf("bad epoch %q", first))
		}
	}
	e, err := strconv.ParseUint(string(first), 10, 64)
	if err != nil || (len(first) > 1 && first[0] == '0') {
		return bad(fmt.Sprintf("bad epoch %q", first))
	}
	return e, nil
}

// BumpEpoch reads the node's last incarnation from dir/epoch (0 when
// absent), writes the next one atomically and returns it. Every start of a
// node, fresh or resumed, is a new incarnation: batch ids carry it, so
// receivers never take a restarted node's batches for ones they processed.
func BumpEpoch(dir string) (uint64, error) {
	last, err := ReadEpoch(dir)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("recorder: %w", err)
	}
	next := last + 1
	return next, SetEpoch(dir, next)
}

// SetEpoch writes epoch to dir/epoch atomically and durably: the node's
// incarnation from now on (a later start is epoch+1).
func SetEpoch(dir string, epoch uint64) error {
	line := strconv.FormatUint(epoch, 10) + "\n"
	return tracefile.WriteFileDurable(filepath.Join(dir, EpochFile), func(w io.Writer) error {
		_, err := io.WriteString(w, line+tracefile.HashString(xxhash.Sum64String(line))+"\n")
		return err
	})
}
