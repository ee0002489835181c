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

// setDirect turns O_DIRECT on or off for f.
func setDirect(f *os.File, on bool) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = sc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			serr = err
			return
		}
		if on {
			fl |= unix.O_DIRECT
		} else {
			fl &^= unix.O_DIRECT
		}
		_, serr = unix.FcntlInt(fd, unix.F_SETFL, fl)
	})
	if err != nil {
		return err
	}
	return serr
}

// directRefused reports whether err is a file system's refusal of direct
// I/O (of the flag at open, or of a write's alignment).
func directRefused(err error) bool { return errors.Is(err, syscall.EINVAL) }

func datasync(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) { serr = unix.Fdatasync(int(fd)) }); err != nil {
		return err
	}
	return serr
}
