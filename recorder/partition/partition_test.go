package partition

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// pinned are known answers: recorded traces depend on which node a URL goes
// to, so a change here is a trace format change.
var pinned = []struct {
	name  string
	nodes int
	url   string
	want  int
}{
	{"host", 2, "http://example.com/", 1},
	{"host", 2, "http://www.example.com/a/b?c", 0},
	{"host", 2, "https://sub.example.co.uk:8443/x", 0},
	{"host", 2, "http://127.0.0.1:8080/page", 1},
	{"host", 2, "http://[::1]/", 1},
	{"host", 2, "http://a.b.c.d.example.org/", 0},
	{"host", 3, "http://example.com/", 2},
	{"host", 3, "http://www.example.com/a/b?c", 1},
	{"host", 3, "https://sub.example.co.uk:8443/x", 0},
	{"host", 3, "http://127.0.0.1:8080/page", 0},
	{"host", 3, "http://[::1]/", 1},
	{"host", 3, "http://a.b.c.d.example.org/", 1},
	{"host", 8, "http://example.com/", 1},
	{"host", 8, "http://www.example.com/a/b?c", 6},
	{"host", 8, "https://sub.example.co.uk:8443/x", 0},
	{"host", 8, "http://127.0.0.1:8080/page", 7},
	{"host", 8, "http://[::1]/", 7},
	{"host", 8, "http://a.b.c.d.example.org/", 4},
	{"host", 64, "http://example.com/", 9},
	{"host", 64, "http://www.example.com/a/b?c", 46},
	{"host", 64, "https://sub.example.co.uk:8443/x", 24},
	{"host", 64, "http://127.0.0.1:8080/page", 39},
	{"host", 64, "http://[::1]/", 39},
	{"host", 64, "http://a.b.c.d.example.org/", 20},
	{"url", 2, "http://example.com/", 1},
	{"url", 2, "http://www.example.com/a/b?c", 0},
	{"url", 2, "https://sub.example.co.uk:8443/x", 1},
	{"url", 2, "http://127.0.0.1:8080/page", 0},
	{"url", 2, "http://[::1]/", 1},
	{"url", 2, "http://a.b.c.d.example.org/", 0},
	{"url", 3, "http://example.com/", 0},
	{"url", 3, "http://www.example.com/a/b?c", 0},
	{"url", 3, "https://sub.example.co.uk:8443/x", 0},
	{"url", 3, "http://127.0.0.1:8080/page", 1},
	{"url", 3, "http://[::1]/", 0},
	{"url", 3, "http://a.b.c.d.example.org/", 0},
	{"url", 8, "http://example.com/", 1},
	{"url", 8, "http://www.example.com/a/b?c", 6},
	{"url", 8, "https://sub.example.co.uk:8443/x", 1},
	{"url", 8, "http://127.0.0.1:8080/page", 2},
	{"url", 8, "http://[::1]/", 7},
	{"url", 8, "http://a.b.c.d.example.org/", 4},
	{"url", 64, "http://example.com/", 49},
	{"url", 64, "http://www.example.com/a/b?c", 62},
	{"url", 64, "https://sub.example.co.uk:8443/x", 57},
	{"url", 64, "http://127.0.0.1:8080/page", 50},
	{"url", 64, "http://[::1]/", 55},
	{"url", 64, "http://a.b.c.d.example.org/", 12},
	{"domain", 2, "http://example.com/", 1},
	{"domain", 2, "http://www.example.com/a/b?c", 1},
	{"domain", 2, "https://sub.example.co.uk:8443/x", 0},
	{"domain", 2, "http://127.0.0.1:8080/page", 1},
	{"domain", 2, "http://[::1]/", 1},
	{"domain", 2, "http://a.b.c.d.example.org/", 1},
	{"domain", 3, "http://example.com/", 2},
	{"domain", 3, "http://www.example.com/a/b?c", 2},
	{"domain", 3, "https://sub.example.co.uk:8443/x", 0},
	{"domain", 3, "http://127.0.0.1:8080/page", 0},
	{"domain", 3, "http://[::1]/", 1},
	{"domain", 3, "http://a.b.c.d.example.org/", 2},
	{"domain", 8, "http://example.com/", 1},
	{"domain", 8, "http://www.example.com/a/b?c", 1},
	{"domain", 8, "https://sub.example.co.uk:8443/x", 4},
	{"domain", 8, "http://127.0.0.1:8080/page", 7},
	{"domain", 8, "http://[::1]/", 7},
	{"domain", 8, "http://a.b.c.d.example.org/", 5},
	{"domain", 64, "http://example.com/", 9},
	{"domain", 64, "http://www.example.com/a/b?c", 9},
	{"domain", 64, "https://sub.example.co.uk:8443/x", 44},
	{"domain", 64, "http://127.0.0.1:8080/page", 39},
	{"domain", 64, "http://[::1]/", 39},
	{"domain", 64, "http://a.b.c.d.example.org/", 53},
	{"consistent", 2, "http://example.com/", 0},
	{"consistent", 2, "http://www.example.com/a/b?c", 1},
	{"consistent", 2, "https://sub.example.co.uk:8443/x", 0},
	{"consistent", 2, "http://127.0.0.1:8080/page", 0},
	{"consistent", 2, "http://[::1]/", 0},
	{"consistent", 2, "http://a.b.c.d.example.org/", 0},
	{"consistent", 3, "http://example.com/", 2},
	{"consistent", 3, "http://www.example.com/a/b?c", 1},
	{"consistent", 3, "https://sub.example.co.uk:8443/x", 0},
	{"consistent", 3, "http://127.0.0.1:8080/page", 0},
	{"consistent", 3, "http://[::1]/", 2},
	{"consistent", 3, "http://a.b.c.d.example.org/", 0},
	{"consistent", 8, "http://example.com/", 6},
	{"consistent", 8, "http://www.example.com/a/b?c", 4},
	{"consistent", 8, "https://sub.example.co.uk:8443/x", 4},
	{"consistent", 8, "http://127.0.0.1:8080/page", 5},
	{"consistent", 8, "http://[::1]/", 7},
	{"consistent", 8, "http://a.b.c.d.example.org/", 0},
	{"consistent", 64, "http://example.com/", 38},
	{"consistent", 64, "http://www.example.com/a/b?c", 54},
	{"consistent", 64, "https://sub.example.co.uk:8443/x", 8},
	{"consistent", 64, "http://127.0.0.1:8080/page", 5},
	{"consistent", 64, "http://[::1]/", 16},
	{"consistent", 64, "http://a.b.c.d.example.org/", 28},
}

func TestPinned(t *testing.T) {
	for _, c := range pinned {
		p, err := New(c.name, c.nodes, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Node(c.url); got != c.want {
			t.Errorf("%s/%d: Node(%q) = %d, want %d", c.name, c.nodes, c.url, got, c.want)
		}
	}
}

// TestSplitMix64 pins the ring's generator against the reference
// implementation's first outputs from state 0.
func TestSplitMix64(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	var s, v uint64
	for i, w := range want {
		s, v = splitmix64(s)
		if v != w {
			t.Errorf("output %d = %#x, want %#x", i, v, w)
		}
	}
	if got := seed(0); got != 0x34c96acdcadb1bbb {
		t.Errorf("seed(0) = %#x", got)
	}
}

func TestHostOf(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://example.com/", "example.com"},
		{"http://example.com", "example.com"},
		{"https://example.com:8443/a/b", "example.com"},
		{"http://example.com.:8080/", "example.com"},
		{"http://example.com:/", "example.com"},
		{"http://example.com?q", "example.com"},
		{"http://example.com#f", "example.com"},
		{"http://user:pw@example.com/x", "example.com"},
		{"http://Example.COM/Path", "example.com"},
		{"HTTP://example.com/", "example.com"},
		{"http://[::1]:8080/", "[::1]"},
		{"http://[::1]/", "[::1]"},
		{"http://a.com/x@y", "a.com"},
		{"http://a.com\\x", "a.com"},
		{"example.com/x", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := HostOf(c.in); got != c.want {
			t.Errorf("HostOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	u := "http://www.example.com:8080/some/path?q=1"
	if n := testing.AllocsPerRun(100, func() { _ = HostOf(u) }); n != 0 {
		t.Errorf("HostOf allocates %v times", n)
	}
}

func TestDomainOf(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://example.com/", "example.com"},
		{"http://www.example.com/", "example.com"},
		{"http://a.b.example.com:8080/", "example.com"},
		{"http://x.example.co.uk/", "example.co.uk"},
		{"http://foo.github.io/", "foo.github.io"},
		{"http://co.uk/", "co.uk"},
		{"http://localhost:8080/", "localhost"},
		{"http://127.0.0.1:8080/", "127.0.0.1"},
		{"http://[::1]/", "[::1]"},
		{"http://h1.test/", "h1.test"},
		{"http://a.h1.test/", "h1.test"},
	}
	for _, c := range cases {
		if got := DomainOf(c.in); got != c.want {
			t.Errorf("DomainOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNew(t *testing.T) {
	for _, name := range append(Names(), "") {
		p, err := New(name, 5, 0)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		want := name
		if want == "" {
			want = "host"
		}
		if p.Name() != want || p.Nodes() != 5 {
			t.Errorf("New(%q) = %s over %d nodes", name, p.Name(), p.Nodes())
		}
	}
	if p, _ := New("consistent", 3, 0); p.(*Consistent).Replicas() != DefaultReplicas {
		t.Errorf("default replicas = %d", p.(*Consistent).Replicas())
	}
	bad := []struct {
		name           string
		nodes, replica int
		msg            string
	}{
		{"host", 0, 0, "partition: bad partitioner config: nodes must be at least 1, got 0"},
		{"consistent", 2, -1, "replicas must not be negative"},
		{"ring", 2, 0, `unknown partitioner "ring" (want one of host, url, domain, consistent)`},
	}
	for _, c := range bad {
		_, err := New(c.name, c.nodes, c.replica)
		if err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("New(%q, %d, %d) error = %v, want %q", c.name, c.nodes, c.replica, err, c.msg)
		}
	}
}

// syntheticHosts returns n distinct host names with distinct registrable
// domains.
func syntheticHosts(n int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("http://www.site%d.com/", i)
	}
	return h
}

// balanceBounds are the stated max/mean load bounds (see the package doc).
// The hashes are fixed, so the measured values are deterministic: host
// 1.107, url 1.089, domain 1.082, consistent 1.290.
var balanceBounds = map[string]float64{"host": 1.12, "url": 1.12, "domain": 1.12, "consistent": 1.32}

func TestBalance(t *testing.T) {
	hosts := syntheticHosts(100_000)
	// Hash every key once; node = hash mod N (or the ring owner of the
	// hash), checked against Node on a sample below.
	keyHash := map[string]func(string) uint64{
		"host":       func(u string) uint64 { return xxhash.Sum64String(HostOf(u)) },
		"url":        xxhash.Sum64String,
		"domain":     func(u string) uint64 { return xxhash.Sum64String(DomainOf(u)) },
		"consistent": func(u string) uint64 { return xxhash.Sum64String(HostOf(u)) },
	}
	hashes := make([]uint64, len(hosts))
	for _, name := range Names() {
		for i, h := range hosts {
			hashes[i] = keyHash[name](h)
		}
		worst := 0.0
		for n := 2; n <= 64; n++ {
			if testing.Short() && n > 3 && n%8 != 0 {
				continue
			}
			p, err := New(name, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			node := func(h uint64) int { return int(h % uint64(n)) }
			if c, ok := p.(*Consistent); ok {
				node = c.NodeOfHash
			}
			load := make([]int, n)
			for i, h := range hashes {
				k := node(h)
				if i < 100 && k != p.Node(hosts[i]) {
					t.Fatalf("%s/%d: shortcut gives node %d for %s, Node gives %d", name, n, k, hosts[i], p.Node(hosts[i]))
				}
				load[k]++
			}
			m := 0
			for _, l := range load {
				m = max(m, l)
			}
			worst = math.Max(worst, float64(m)*float64(n)/float64(len(hosts)))
		}
		bound := balanceBounds[name]
		t.Logf("%s: worst max/mean load over N=2..64 = %.3f (bound %.2f)", name, worst, bound)
		if worst > bound {
			t.Errorf("%s: max/mean load %.3f exceeds %.2f", name, worst, bound)
		}
	}
}

// TestHostLocality checks that "host" and "consistent" send every URL of a
// host to one node, and "domain" every URL of a registrable domain.
func TestHostLocality(t *testing.T) {
	paths := []string{"/", "/a", "/b/c?d=e", "/x/y/z.html"}
	for _, name := range []string{"host", "consistent", "domain"} {
		p, _ := New(name, 16, 0)
		for i := 0; i < 200; i++ {
			host := fmt.Sprintf("www%d.site%d.org", i%3, i)
			want := p.Node("http://" + host + "/")
			for _, path := range paths {
				if got := p.Node("http://" + host + path); got != want {
					t.Fatalf("%s: %s%s on node %d, host on %d", name, host, path, got, want)
				}
			}
		}
	}
	d, _ := New("domain", 16, 0)
	for i := 0; i < 200; i++ {
		want := d.Node(fmt.Sprintf("http://site%d.co.uk/", i))
		for _, sub := range []string{"www", "a.b", "img"} {
			if got := d.Node(fmt.Sprintf("http://%s.site%d.co.uk:8080/x", sub, i)); got != want {
				t.Fatalf("domain: subdomain %s of site%d on node %d, domain on %d", sub, i, got, want)
			}
		}
	}
	// "url" spreads one host's URLs.
	u, _ := New("url", 16, 0)
	seen := map[int]bool{}
	for i := 0; i < 100; i++ {
		seen[u.Node(fmt.Sprintf("http://one.example.com/p%d", i))] = true
	}
	if len(seen) < 12 {
		t.Errorf("url: 100 URLs of one host hit only %d of 16 nodes", len(seen))
	}
}

func TestConsistentContravariance(t *testing.T) {
	hosts := syntheticHosts(20_000)
	ids := []int{3, 7, 11, 20, 42, 99, 1000, 5}
	c := NewConsistent(ids, 0)
	before := make([]int, len(hosts))
	for i, h := range hosts {
		before[i] = c.Node(h)
	}
	// Node loss: only the lost node's hosts move.
	for _, lost := range ids {
		w := c.Without(lost)
		if w.Nodes() != len(ids)-1 {
			t.Fatalf("Without(%d) has %d nodes", lost, w.Nodes())
		}
		for i, h := range hosts {
			got := w.Node(h)
			if got == lost {
				t.Fatalf("Without(%d) still assigns %s to it", lost, h)
			}
			if before[i] != lost && got != before[i] {
				t.Fatalf("Without(%d) moved %s from %d to %d", lost, h, before[i], got)
			}
		}
	}
	// Node addition: hosts move only to the new node, and it gets about its
	// share.
	add := c.With(77)
	moved := 0
	for i, h := range hosts {
		got := add.Node(h)
		if got != before[i] {
			if got != 77 {
				t.Fatalf("With(77) moved %s from %d to %d", h, before[i], got)
			}
			moved++
		}
	}
	share := float64(moved) / float64(len(hosts))
	if share < 0.5/9 || share > 2.0/9 {
		t.Errorf("With(77) moved %.3f of hosts, want about 1/9", share)
	}
	// Removing and re-adding gives the same ring; absent ids change nothing.
	if again := c.Without(42).With(42); !sameAssignment(c, again, hosts) {
		t.Error("Without(42).With(42) differs from the original ring")
	}
	if !sameAssignment(c, c.Without(12345), hosts) || !sameAssignment(c, c.With(3), hosts) {
		t.Error("removing an absent id or adding a present one changed the ring")
	}
	if got := c.IDs(); fmt.Sprint(got) != "[3 5 7 11 20 42 99 1000]" {
		t.Errorf("IDs() = %v", got)
	}
	// An empty ring assigns nothing.
	if got := NewConsistent(nil, 10).Node("http://a.com/"); got != -1 {
		t.Errorf("empty ring Node = %d, want -1", got)
	}
	// New("consistent", n, r) is NewConsistent over ids 0..n-1.
	p, _ := New("consistent", 8, 0)
	if !sameAssignment(p, NewConsistent([]int{7, 6, 5, 4, 3, 2, 1, 0, 0}, 100), hosts) {
		t.Error(`New("consistent", 8, 0) differs from NewConsistent(0..7, 100)`)
	}
}

// TestModNMovesAlmostEverything documents why "host" is not contravariant.
func TestModNMovesAlmostEverything(t *testing.T) {
	hosts := syntheticHosts(20_000)
	a, b := Host{N: 8}, Host{N: 9}
	moved := 0
	for _, h := range hosts {
		if a.Node(h) != b.Node(h) {
			moved++
		}
	}
	if frac := float64(moved) / float64(len(hosts)); frac < 0.8 {
		t.Errorf("host mod 8 -> mod 9 moved only %.3f of hosts", frac)
	}
}

func sameAssignment(a, b Partitioner, urls []string) bool {
	for _, u := range urls {
		if a.Node(u) != b.Node(u) {
			return false
		}
	}
	return true
}

// TestConcurrent exercises every partitioner from several goroutines; run
// with -race.
func TestConcurrent(t *testing.T) {
	hosts := syntheticHosts(1000)
	for _, name := range Names() {
		p, _ := New(name, 7, 0)
		want := make([]int, len(hosts))
		for i, h := range hosts {
			want[i] = p.Node(h)
		}
		done := make(chan bool)
		for g := 0; g < 4; g++ {
			go func() {
				ok := true
				for i, h := range hosts {
					ok = ok && p.Node(h) == want[i]
				}
				done <- ok
			}()
		}
		for g := 0; g < 4; g++ {
			if !<-done {
				t.Errorf("%s: concurrent Node disagrees", name)
			}
		}
	}
}

// TestOneServerOneNode: a host's URLs go to one node whatever their scheme,
// port, user info or trailing dot (one server, one politeness queue), for
// every partitioner keyed by host.
func TestOneServerOneNode(t *testing.T) {
	same := []string{
		"http://www.example.com/a",
		"https://www.example.com/b",
		"http://www.example.com:8080/c",
		"https://user@WWW.example.com.:8443/d",
	}
	for _, name := range []string{"host", "domain", "consistent"} {
		for _, n := range []int{2, 3, 8, 64} {
			p, err := New(name, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := p.Node(same[0])
			for _, u := range same[1:] {
				if got := p.Node(u); got != want {
					t.Errorf("%s/%d: Node(%q) = %d, Node(%q) = %d", name, n, u, got, same[0], want)
				}
			}
		}
	}
}

// Every partitioner name New accepts is one trace readers accept in the
// crawltrace.partitioner metadata (tracefile.Partitioners), or a trace
// written with it would be refused as damaged.
func TestNamesAreTraceablePartitioners(t *testing.T) {
	for _, n := range Names() {
		if !slices.Contains(tracefile.Partitioners, n) {
			t.Errorf("partitioner %q is not in tracefile.Partitioners", n)
		}
	}
}
