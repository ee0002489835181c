package recorder

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/splitter"
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
	a := &node{split: splitter.New(splitter.Options{})}
	i := int64(1)
	for _, c := range a.st.counters() {
		c.Store(i)
		i++
	}
	var buf bytes.Buffer
	if err := (countersPart{a}).saveCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	b := &node{split: splitter.New(splitter.Options{})}
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

// A checkpoint part missing, or not the size checkpoint.json records, is
// refused on resume with an error naming it (a missing part was skipped,
// and the node resumed without that state).
func TestResumeRefusesDamagedCheckpointPart(t *testing.T) {
	srv, err := testweb.Serve(context.Background(), "127.0.0.1:0", testweb.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
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
	a := &node{front: newFrontier(OrderBFS, 1), split: splitter.New(splitter.Options{})}
	a.front.s.keyOf = func(u string) string { return "ip:192.0.2.1" } // both hosts on one address
	for _, u := range []string{"http://a.test/1", "http://b.test/2", "http://a.test/3"} {
		a.front.add(u)
	}
	var buf bytes.Buffer
	if err := (frontierPart{a}).saveCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	b := &node{front: newFrontier(OrderBFS, 1), split: splitter.New(splitter.Options{})}
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
	a := &node{front: newFrontier(OrderBFS, 1), split: splitter.New(splitter.Options{})}
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
	b := &node{front: newFrontier(OrderBFS, 1), split: splitter.New(splitter.Options{})}
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
