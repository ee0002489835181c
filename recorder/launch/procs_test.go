package launch

import (
	"strconv"
	"testing"
)

// TestProcs: the cores are divided among the crawl's nodes on this
// machine only when nothing divided them before; a peer elsewhere, a
// user's $GOMAXPROCS, a CPU affinity or container limit, or an unknown
// CPU count leaves Go's default.
func TestProcs(t *testing.T) {
	local := func(h string) bool { return h == "127.0.0.1" || h == "me" }
	peers := func(hosts ...string) []string {
		var p []string
		for i, h := range hosts {
			p = append(p, h+":"+strconv.Itoa(9000+i))
		}
		return p
	}
	eight := peers("127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1")
	for _, tc := range []struct {
		name        string
		peers       []string
		self        int
		m           Machine
		procs, here int
	}{
		{"8 on 2 cores", eight, 3, Machine{GOMAXPROCS: 2, Online: 2}, 1, 8},
		{"8 on 16 cores", eight, 0, Machine{GOMAXPROCS: 16, Online: 16}, 2, 8},
		{"3 on 16 cores", peers("me", "me", "me"), 2, Machine{GOMAXPROCS: 16, Online: 16}, 5, 3},
		{"one a machine", peers("a", "b", "me", "c"), 2, Machine{GOMAXPROCS: 16, Online: 16}, 16, 1},
		{"two of four here", peers("a", "me", "b", "me"), 1, Machine{GOMAXPROCS: 16, Online: 16}, 8, 2},
		{"self named otherwise", peers("a", "crawl-1.crawl", "b"), 1, Machine{GOMAXPROCS: 4, Online: 4}, 4, 1},
		{"GOMAXPROCS set", eight, 0, Machine{GOMAXPROCS: 2, Online: 2, Env: true}, 2, 8},
		{"bound to 4 of 16 cores", eight, 0, Machine{GOMAXPROCS: 4, Online: 16}, 4, 8},
		{"online unknown", eight, 0, Machine{GOMAXPROCS: 2}, 2, 8},
		{"one node", nil, 0, Machine{GOMAXPROCS: 2, Online: 2}, 2, 1},
	} {
		tc.m.Local = local
		procs, here := Procs(tc.peers, tc.self, tc.m)
		if procs != tc.procs || here != tc.here {
			t.Errorf("%s: %d procs, %d nodes here; want %d, %d", tc.name, procs, here, tc.procs, tc.here)
		}
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0": 1, "0-1": 2, "0-3,6": 5, "0-3,8-11": 8, "": 0, "x": 0, "3-1": 0, "0-": 0} {
		if got := countCPUList(s); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

// TestLocalHost: loopback and "localhost" are this machine; a documentation
// address (192.0.2.0/24) and another name are not.
func TestLocalHost(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1": true, "127.0.0.2": true, "::1": true, "localhost": true,
		"192.0.2.7": false, "crawl-node-that-is-not-this-one.invalid": false} {
		if got := localHost(h); got != want {
			t.Errorf("%s: local %v, want %v", h, got, want)
		}
	}
}
