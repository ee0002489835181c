//go:build !linux

package tracefile

import (
	"errors"
	"os"
)

// openDirect creates (or truncates) path for writing: through the page
// cache here (direct is false).
func openDirect(path string) (f *os.File, direct bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	return f, false, err
}

func setDirect(f *os.File, on bool) error {
	if on {
		return errors.New("no direct I/O here")
	}
	return nil
}

func directRefused(err error) bool { return false }

func datasync(f *os.File) error { return f.Sync() }
