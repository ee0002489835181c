package frontier

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// savedGob is what the recorder's frontier part held, before this package
// existed, for the frontier TestSaveFormat builds: a server with robots.txt
// rules whose first URL a worker holds, and one whose robots.txt is being
// fetched (its first URL parked).
const savedGob = "030400043f7f030101097361766564486f737401ff8000010401034b6579010c0001064e65787441740104000106526f626f747301ff82000105436f756e740104000000ffa0ff810301010b726f626f7473537461746501ff8200010b01065374617475730104000104426f6479010c000108416c6c6f77416c6c010200010744656e79416c6c010200010a437261776c44656c617901040001064f726967696e010c00010946657463686564417401ff840001074578706972657301ff840001084661696c7572657301040001085265747279696e6701020001044e65787401ff8200000010ff830501010454696d6501ff8400000045ff800106612e746573740201fe0190012a557365722d6167656e743a202a0a446973616c6c6f773a202f780a437261776c2d64656c61793a20320a03fcee6b28000001040028ff8503010109736176656455524c7301ff86000102010455524c7301ff880001015101ff8a00000016ff87020101085b5d737472696e6701ff8800010c000017ff89020101095b5d666c6f6174363401ff8a000108000029ff8601020f687474703a2f2f612e746573742f310f687474703a2f2f612e746573742f3201020000000dff800106622e7465737403040029ff8601020f687474703a2f2f622e746573742f320f687474703a2f2f622e746573742f310102000000"

// TestSaveFormat: the checkpoint's frontier part is byte for byte what it
// was, and loads back with the same URLs on the same servers.
func TestSaveFormat(t *testing.T) {
	f := testFrontier(OrderBFS)
	for _, u := range []string{"http://a.test/1", "http://a.test/2", "http://b.test/1", "http://b.test/2"} {
		f.Add(u)
	}
	tk, _ := f.Next(t.Context())
	if !tk.Robots || tk.URL != "http://a.test" {
		t.Fatalf("first task %+v", tk)
	}
	f.RobotsDone(tk.Host, tk.URL, func(*robots.Rules) *robots.Rules {
		return robots.New(200, "User-agent: *\nDisallow: /x\nCrawl-delay: 2\n", nil, "x")
	})
	f.Release(tk.Host, false, 0)
	if tk, _ = f.Next(t.Context()); tk.URL != "http://a.test/1" {
		t.Fatalf("second task %+v", tk)
	}
	if tk, _ = f.Next(t.Context()); !tk.Robots || tk.URL != "http://b.test" {
		t.Fatalf("third task %+v", tk)
	}
	var b bytes.Buffer
	if err := f.save(gob.NewEncoder(&b)); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b.Bytes()); got != savedGob {
		t.Errorf("frontier part changed:\n got %s\nwant %s", got, savedGob)
	}
	g := testFrontier(OrderBFS)
	urls := 0
	old, _ := hex.DecodeString(savedGob)
	if err := g.load(gob.NewDecoder(bytes.NewReader(old)), func(n int) { urls += n }); err != nil {
		t.Fatal(err)
	}
	a, bh := g.s.hosts["a.test"], g.s.hosts["b.test"]
	if urls != 4 || a == nil || bh == nil || a.queued() != 2 || bh.queued() != 2 || len(g.s.hosts) != 2 {
		t.Fatalf("loaded %d URLs, servers %v", urls, g.s.hosts)
	}
	if a.robots.MaxCrawlDelay() != 2*time.Second || bh.robots != nil {
		t.Errorf("robots.txt rules not restored: a %v, b %v", a.robots, bh.robots)
	}
	// a.test/1, held by a worker at the cut, comes first.
	if x := g.s.popURL(a); x.url != "http://a.test/1" {
		t.Errorf("a.test serves %s first", x.url)
	}
}

// A frontier checkpoint loads every URL back on the server it was saved
// under without computing a politeness key again (in ip mode that is a
// DNS lookup per host, under the frontier's lock).
func TestFrontierRestoreKeepsKeys(t *testing.T) {
	a := New(Options{Order: OrderBFS, Seed: 1, KeyOf: func(u string) string { return "ip:192.0.2.1" }}) // both hosts on one address
	for _, u := range []string{"http://a.test/1", "http://b.test/2", "http://a.test/3"} {
		a.Add(u)
	}
	var buf bytes.Buffer
	if err := a.save(gob.NewEncoder(&buf)); err != nil {
		t.Fatal(err)
	}
	lookups := 0
	b := New(Options{Order: OrderBFS, Seed: 1, KeyOf: func(u string) string { lookups++; return "ip:198.51.100.7" }}) // DNS changed since
	if err := b.load(gob.NewDecoder(&buf), func(int) {}); err != nil {
		t.Fatal(err)
	}
	if lookups != 0 {
		t.Errorf("loading the frontier computed %d politeness keys", lookups)
	}
	h := b.s.hosts["ip:192.0.2.1"]
	if h == nil || h.queued() != 3 || len(b.s.hosts) != 1 {
		t.Errorf("servers after load %v, want the 3 URLs on ip:192.0.2.1", b.s.hosts)
	}
}

// testKeys are ip-mode politeness keys: an address is its own key, known
// at once; a name's key comes from lookup.
type testKeys struct {
	lookup func(host string) string
	mu     sync.Mutex
	known  map[string]string
}

func (k *testKeys) Cached(u string) (string, bool) {
	h := politeness.Host(u)
	if a, err := netip.ParseAddr(h); err == nil {
		return "ip:" + a.String(), true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.known[h]
	return key, ok
}

func (k *testKeys) Key(u string) string {
	if key, ok := k.Cached(u); ok {
		return key
	}
	key := k.lookup(politeness.Host(u))
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.known == nil {
		k.known = map[string]string{}
	}
	k.known[politeness.Host(u)] = key
	return key
}

// URLs waiting for their server's DNS lookup at a checkpoint (ip mode)
// are saved, and queued again when the checkpoint loads.
func TestFrontierSavesURLsAwaitingLookup(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := &testKeys{lookup: func(host string) string {
		<-release
		return host // the lookup failed: the host keeps its own key
	}}
	a := New(Options{Order: OrderBFS, Seed: 1, KeyOf: slow.Key, Keys: slow})
	a.Add("http://slow.test/1")
	a.Add("http://slow.test/2")
	a.Add("http://192.0.2.1/x") // an address: keyed at once
	var buf bytes.Buffer
	if err := a.save(gob.NewEncoder(&buf)); err != nil {
		t.Fatal(err)
	}
	fast := &testKeys{lookup: func(string) string { return "ip:192.0.2.5" }}
	b := New(Options{Order: OrderBFS, Seed: 1, KeyOf: fast.Key, Keys: fast})
	if err := b.load(gob.NewDecoder(&buf), func(int) {}); err != nil {
		t.Fatal(err)
	}
	crawltest.WaitFor(t, "slow.test's 2 URLs on ip:192.0.2.5 and 1 on ip:192.0.2.1 after loading", 5*time.Second, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		h, x := b.s.hosts["ip:192.0.2.5"], b.s.hosts["ip:192.0.2.1"]
		return h != nil && h.queued() == 2 && x != nil && x.queued() == 1
	})
}
