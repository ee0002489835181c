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

// Available is the memory this process could still take, in bytes: the
// kernel's estimate of what can be allocated without swapping
// (MemAvailable of /proc/meminfo), lowered to what the process's cgroup
// (v2) has left under its memory.max when that is set. It is 0 where
// there is no /proc/meminfo (not Linux).
func Available() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	avail := meminfoField(string(b), "MemAvailable:")
	if left, ok := cgroupLeft(); ok && left < avail {
		avail = left
	}
	return avail
}

// meminfoField is the value of a kB field of /proc/meminfo in bytes, 0
// when absent.
func meminfoField(meminfo, name string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cgroupLeft is memory.max less memory.current of this process's cgroup
// (v2), when it has a limit.
func cgroupLeft() (int64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	var dir string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			dir = "/sys/fs/cgroup" + p
		}
	}
	if dir == "" {
		return 0, false
	}
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil // "max" (no limit) does not parse
	}
	limit, ok := read("memory.max")
	if !ok {
		return 0, false
	}
	cur, _ := read("memory.current")
	return max(limit-cur, 0), true
}
