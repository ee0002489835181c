package launch

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Sharing one machine's cores among the nodes of a crawl that run on it.
//
// A Go process runs GOMAXPROCS threads at once, by default one per core
// it may use. Several nodes of a crawl on one machine, each with one
// thread per core, keep more threads runnable than there are cores: a
// thread that finds no work spins, steals and sleeps a few microseconds,
// and a goroutine parked in a system call has its processor handed to
// another thread. On a 2-core machine running 8 nodes, `strace -c` of one
// node counted 18 times the futex calls and 33 times the nanosleeps of
// one node in `--nodes 8`, for the same pages (docs/benchmarks.md, "A
// crawl over TCP"). A batch system that binds each task to its own cores
// (Slurm's --cpu-bind, a container's CPU limit) has already divided the
// machine, and Go's default follows that; only where nothing divided it
// does [Procs] divide it.

// Machine is what [Procs] knows of the process and its machine.
type Machine struct {
	// GOMAXPROCS is the process's default (runtime.GOMAXPROCS(0)): its
	// CPU affinity and its container's CPU limit, if any, already applied.
	GOMAXPROCS int
	// Online is the machine's online CPUs; 0 when not known.
	Online int
	// Env is true when $GOMAXPROCS is set: the user chose.
	Env bool
	// Local reports whether a peer's host is this machine.
	Local func(host string) bool
}

// ThisMachine describes this process and its machine (Linux: the online
// CPUs from /sys; elsewhere Online is 0 and nothing is divided).
func ThisMachine() Machine {
	_, env := os.LookupEnv("GOMAXPROCS")
	return Machine{GOMAXPROCS: runtime.GOMAXPROCS(0), Online: onlineCPUs(), Env: env, Local: localHost}
}

// Procs is the GOMAXPROCS node self of peers should run with, and the
// number of the crawl's nodes on this machine: the machine's cores
// divided among those nodes (at least one each) when they are more than
// one and nothing else divided the machine (no $GOMAXPROCS, and a default
// equal to the machine's online CPUs); else m.GOMAXPROCS.
func Procs(peers []string, self int, m Machine) (procs, here int) {
	if len(peers) == 0 {
		return m.GOMAXPROCS, 1
	}
	for i, p := range peers {
		host, _, err := net.SplitHostPort(p)
		if i == self || (err == nil && m.Local != nil && m.Local(host)) {
			here++
		}
	}
	if here <= 1 || m.Env || m.Online <= 0 || m.GOMAXPROCS != m.Online {
		return m.GOMAXPROCS, here
	}
	return max(1, m.GOMAXPROCS/here), here
}

// localHost reports whether host names this machine: a loopback or local
// interface address, "localhost", or this machine's host name (or its
// first label). Names are not looked up.
func localHost(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return false
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	me, err := os.Hostname()
	if err != nil || me == "" {
		return false
	}
	short, _, _ := strings.Cut(me, ".")
	return strings.EqualFold(host, me) || strings.EqualFold(host, short)
}

// onlineCPUs counts the CPUs in /sys/devices/system/cpu/online ("0-3,6"),
// 0 when it cannot be read.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	return countCPUList(strings.TrimSpace(string(b)))
}

// countCPUList counts the CPUs of a kernel CPU list ("0-3,6"); 0 when it
// is malformed.
func countCPUList(s string) int {
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
