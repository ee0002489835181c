// Package procmem reads what the operating system says of this process's
// memory.
package procmem

import (
	"os"
	"strconv"
	"strings"
)

// PeakRSS is this process's peak resident set size in bytes: VmHWM of
// /proc/self/status, 0 where there is none (not Linux).
//
// It is what a memory bound should be checked against, and not a child's
// ru_maxrss as its parent sees it: a Go parent starts a child with vfork
// semantics, so the child's ru_maxrss includes the parent's own peak (a
// test binary of 800 MiB makes /bin/true report 803 MiB), while VmHWM
// counts only the child's memory after exec.
func PeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
