package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// Every atomic counter of a node is in its checkpoint: it is listed by
// counters, and a save and load gives it back.
func TestEveryCounterCheckpointed(t *testing.T) {
	var st nodeStats
	listed := map[*atomic.Int64]bool{}
	for _, c := range st.counters() {
		listed[c] = true
	}
	v := reflect.ValueOf(&st).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Type() == reflect.TypeOf(atomic.Int64{}) && !listed[(*atomic.Int64)(f.Addr().UnsafePointer())] {
			t.Errorf("nodeStats.%s is not in counters(): a resume would restart it from zero", v.Type().Field(i).Name)
		}
	}
	a := &node{split: &splitter{}}
	i := int64(1)
	for _, c := range a.st.counters() {
		c.Store(i)
		i++
	}
	var buf bytes.Buffer
	if err := (countersPart{a}).saveCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	b := &node{split: &splitter{}}
	if err := (countersPart{b}).loadCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	want := a.st.counters()
	for name, c := range b.st.counters() {
		if c.Load() != want[name].Load() {
			t.Errorf("counter %s: %d after load, saved %d", name, c.Load(), want[name].Load())
		}
	}
}

// An outbox file acknowledged twice (its receiver restarted in between)
// keeps one ".rNNNNNNNNNN.acked" suffix, which loadOutbox parses.
func TestOutboxBase(t *testing.T) {
	p := "/x/" + outboxName(2, 3, 4)
	once := fmt.Sprintf("%s.r%010d.acked", outboxBase(p), 5)
	twice := fmt.Sprintf("%s.r%010d.acked", outboxBase(once), 6)
	if outboxBase(p) != p || outboxBase(twice) != p || twice != p+".r0000000006.acked" {
		t.Errorf("base %q, once %q, twice %q", outboxBase(p), once, twice)
	}
}

// The redirect-hop table keeps only targets this node will fetch: a target
// the DUE knew, or another node owns, is forgotten at the splitter (the
// table filled up with them, and past its bound --max-redirects was off).
func TestRedirectTargetsForgottenWhenNotQueued(t *testing.T) {
	part, _ := partition.New("host", 2, 0)
	var chains redirectChains
	s := &splitter{node: 0, part: part, tr: newTracker(), due: NewDUE(1 << 10), front: newFrontier(OrderBFS, 1),
		out: make([]*Batch, 2), batchSize: 1 << 30, now: time.Now, redirs: &chains}
	var local, remote string
	for i := 0; local == "" || remote == ""; i++ {
		u := fmt.Sprintf("http://h%d.test/r", i)
		if s.dest(u) == 0 && local == "" {
			local = u
		} else if s.dest(u) == 1 && remote == "" {
			remote = u
		}
	}
	for _, u := range []string{local, remote} {
		chains.put(u, 1)
	}
	s.process(&splitMsg{urls: []splitURL{{URL: local, Kind: tracefile.URLRedirect}, {URL: remote, Kind: tracefile.URLRedirect}}})
	if len(chains.hops) != 1 || chains.hops[local] != 1 {
		t.Fatalf("after routing: %v; want only the queued local target", chains.hops)
	}
	// The same target again, known to the DUE now: forgotten.
	chains.put(local, 2)
	s.process(&splitMsg{urls: []splitURL{{URL: local, Kind: tracefile.URLRedirect}}})
	if len(chains.hops) != 0 {
		t.Fatalf("a target the DUE knew is still remembered: %v", chains.hops)
	}
}

// A checkpoint part missing, or not the size checkpoint.json records, is
// refused on resume with an error naming it (a missing part was skipped,
// and the node resumed without that state).
func TestResumeRefusesDamagedCheckpointPart(t *testing.T) {
	srv := crawltest.Serve(t, testweb.DefaultConfig())
	for _, damage := range []string{"missing", "longer"} {
		cfg := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
		cfg.MaxPages = 30
		runCrawl(t, cfg)
		part := filepath.Join(stateDir(cfg.OutDir, 0), checkpointDirName, "frontier")
		if damage == "missing" {
			os.Remove(part)
		} else {
			f, _ := os.OpenFile(part, os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("junk"))
			f.Close()
		}
		cfg.Resume, cfg.MaxPages = true, 60
		if _, err := Run(context.Background(), cfg); !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), part) {
			t.Fatalf("resume with the frontier part %s: %v", damage, err)
		}
	}
}

// A frontier checkpoint loads every URL back on the server it was saved
// under without computing a politeness key again (in ip mode that is a
// DNS lookup per host, under the frontier's lock).
func TestFrontierRestoreKeepsKeys(t *testing.T) {
	a := &node{front: newFrontier(OrderBFS, 1), split: &splitter{tr: newTracker()}}
	a.front.s.keyOf = func(u string) string { return "ip:192.0.2.1" } // both hosts on one address
	for _, u := range []string{"http://a.test/1", "http://b.test/2", "http://a.test/3"} {
		a.front.add(u)
	}
	var buf bytes.Buffer
	if err := (frontierPart{a}).saveCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	b := &node{front: newFrontier(OrderBFS, 1), split: &splitter{tr: newTracker()}}
	lookups := 0
	b.front.s.keyOf = func(u string) string { lookups++; return "ip:198.51.100.7" } // DNS changed since
	if err := (frontierPart{b}).loadCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	if lookups != 0 {
		t.Errorf("loading the frontier computed %d politeness keys", lookups)
	}
	h := b.front.s.hosts["ip:192.0.2.1"]
	if h == nil || h.queued() != 3 || len(b.front.s.hosts) != 1 {
		t.Errorf("servers after load %v, want the 3 URLs on ip:192.0.2.1", b.front.s.hosts)
	}
}

// URLs waiting for their server's DNS lookup at a checkpoint (ip mode)
// are saved, and queued again when the checkpoint loads.
func TestFrontierSavesURLsAwaitingLookup(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := newPolitenessKeys(&Config{PolitenessKey: PolitenessIP, lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		<-release
		return nil, errors.New("too late")
	}})
	a := &node{front: newFrontier(OrderBFS, 1), split: &splitter{tr: newTracker()}}
	a.front.keys, a.front.s.keyOf = slow, slow.key
	a.front.add("http://slow.test/1")
	a.front.add("http://slow.test/2")
	a.front.add("http://192.0.2.1/x") // an address: keyed at once
	var buf bytes.Buffer
	if err := (frontierPart{a}).saveCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	fast := newPolitenessKeys(&Config{PolitenessKey: PolitenessIP, lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.0.2.5")}, nil
	}})
	b := &node{front: newFrontier(OrderBFS, 1), split: &splitter{tr: newTracker()}}
	b.front.keys, b.front.s.keyOf = fast, fast.key
	if err := (frontierPart{b}).loadCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.front.mu.Lock()
		h, x := b.front.s.hosts["ip:192.0.2.5"], b.front.s.hosts["ip:192.0.2.1"]
		done := h != nil && h.queued() == 2 && x != nil && x.queued() == 1
		b.front.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after loading, servers %v: want slow.test's 2 URLs on ip:192.0.2.5 and 1 on ip:192.0.2.1", b.front.s.hosts)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
