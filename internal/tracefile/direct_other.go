//go:build !linux

package tracefile

import "os"

// openDirect creates (or truncates) path for writing: through the page
// cache here (direct is false).
func openDirect(path string) (f *os.File, direct bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	return f, false, err
}

func clearDirect(f *os.File) error { return nil }

func directRefused(err error) bool { return false }

func datasync(f *os.File) error { return f.Sync() }
