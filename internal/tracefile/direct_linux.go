package tracefile

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openDirect creates (or truncates) path for writing, with O_DIRECT when
// its file system takes it (direct reports whether it did).
func openDirect(path string) (f *os.File, direct bool, err error) {
	const flags = os.O_RDWR | os.O_CREATE | os.O_TRUNC
	f, err = os.OpenFile(path, flags|syscall.O_DIRECT, 0o666)
	if err == nil {
		return f, true, nil
	}
	if !directRefused(err) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, flags, 0o666)
	return f, false, err
}

// clearDirect turns O_DIRECT off for f.
func clearDirect(f *os.File) error {
	return withFD(f, func(fd int) error {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			return err
		}
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_DIRECT)
		return err
	})
}

// directRefused reports whether err is a file system's refusal of direct
// I/O (of the flag at open, or of a write's alignment).
func directRefused(err error) bool { return errors.Is(err, syscall.EINVAL) }

// datasync writes f's data to its device (fdatasync).
func datasync(f *os.File) error { return withFD(f, unix.Fdatasync) }

// withFD calls fn with f's descriptor.
func withFD(f *os.File, fn func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
