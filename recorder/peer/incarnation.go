package peer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// EpochFile holds a node's incarnation number in its state directory.
const EpochFile = "epoch"

// BumpEpoch reads the node's last incarnation from dir/epoch (0 when
// absent), writes the next one atomically and returns it. Every start of a
// node, fresh or resumed, is a new incarnation: batch ids carry it, so
// receivers never take a restarted node's batches for ones they processed.
func BumpEpoch(dir string) (uint64, error) {
	var last uint64
	b, err := os.ReadFile(filepath.Join(dir, EpochFile))
	switch {
	case err == nil:
		last, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("recorder: %s: bad epoch %q", filepath.Join(dir, EpochFile), strings.TrimSpace(string(b)))
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return 0, fmt.Errorf("recorder: %w", err)
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
	return tracefile.WriteFileDurable(filepath.Join(dir, EpochFile), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%d\n", epoch)
		return err
	})
}
