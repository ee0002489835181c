package outdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// LockName is the lock file of a crawl directory and of each of its node
// directories. Lock files are never removed: removing one while another
// process waits to lock it would let two processes hold "the" lock.
const LockName = ".crawltrace-lock"

// A Lock is a set of held directory locks: flock(2) locks on open lock
// files. The kernel drops them when the process exits, however it exits
// (kill -9 included), so a lock is never stale. A Lock is not safe for
// concurrent use.
type Lock struct {
	files []*os.File
}

// LockCrawl takes the write locks of crawl directory root for command
// ("crawl", "import"): an exclusive lock on each of nodeDirs (node
// directories of root, created if missing), then a lock on root itself,
// exclusive unless shared is set. A process that writes the whole
// directory (an in-process crawl, an import) takes root exclusively; a
// node of a TCP crawl, which shares root with the other nodes, takes its
// own node directory exclusively and root shared. Every lock is tried
// once: when another process holds one, LockCrawl releases what it took
// and returns a one-line error matching [ErrRefused] that names the
// holder's pid and host (which each holder writes into its lock file).
func LockCrawl(command, root string, nodeDirs []string, shared bool) (*Lock, error) {
	l := &Lock{}
	take := func(dir string, how int) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
				return refused{fmt.Sprintf("%s: output directory %s is a file; use another directory", command, dir)}
			}
			return fmt.Errorf("%s: lock %s: %w", command, dir, err)
		}
		path := filepath.Join(dir, LockName)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("%s: lock %s: %w", command, dir, err)
		}
		if err := flock(f, how|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return refused{fmt.Sprintf("%s: %s is in use by %s (lock %s); wait for it to end, or use another directory",
					command, root, holder(path, dir == root), path)}
			}
			return fmt.Errorf("%s: lock %s: %w", command, path, err)
		}
		l.files = append(l.files, f)
		// Who holds it, for the next process refused. A shared holder
		// clears what an earlier exclusive holder wrote.
		info := ""
		if how == syscall.LOCK_EX {
			host, _ := os.Hostname()
			info = fmt.Sprintf("crawltrace %s, pid %d on host %s\n", command, os.Getpid(), host)
		}
		if err := f.Truncate(0); err == nil && info != "" {
			f.WriteAt([]byte(info), 0)
		}
		return nil
	}
	for _, d := range nodeDirs {
		if err := take(d, syscall.LOCK_EX); err != nil {
			l.Unlock()
			return nil, err
		}
	}
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	if err := take(root, how); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}

// Serialize runs fn holding an exclusive flock on the lock file root/name
// (created if missing, never removed), waiting for it: a short critical
// section between the processes that share root, such as the nodes of a
// TCP crawl claiming the directory for their crawl.
func Serialize(root, name string, fn func() error) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("outdir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(root, name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("outdir: %w", err)
	}
	defer f.Close() // releases the lock
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("outdir: lock %s: %w", f.Name(), err)
	}
	return fn()
}

// flock retries flock(2) when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// holder describes who holds the lock file at path, from what its holder
// wrote into it. A holder writes right after it locks: an empty file is
// read again for a moment. A crawl directory's lock held shared, by the
// nodes of a TCP crawl, stays empty.
func holder(path string, root bool) string {
	for try := 0; ; try++ {
		b, _ := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); s != "" && len(s) < 512 && !strings.ContainsAny(s, "\n\r") && !gone(s) {
			return s
		}
		if try == 20 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if root {
		return "another crawltrace process (the nodes of a TCP crawl: see each node directory's " + LockName + ")"
	}
	return "another crawltrace process"
}

// gone reports whether the holder a lock file names is a process of this
// host that no longer runs: what a killed holder wrote, read in the
// moment before the new holder writes over it.
func gone(info string) bool {
	var cmd string
	var pid int
	var host string
	if _, err := fmt.Sscanf(info, "crawltrace %s pid %d on host %s", &cmd, &pid, &host); err != nil {
		return false
	}
	me, _ := os.Hostname()
	return host == me && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH
}

// Unlock releases every lock of l. It is safe to call on a nil Lock and
// more than once.
func (l *Lock) Unlock() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close() // closing the last descriptor releases the flock
	}
	l.files = nil
}
