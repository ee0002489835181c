package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// Every atomic counter of a node is in its checkpoint: it is listed by
// counters, and a save and load gives it back.
func TestEveryCounterCheckpointed(t *testing.T) {
	var st worker.Stats
	listed := map[*atomic.Int64]bool{}
	for _, c := range st.Counters() {
		listed[c] = true
	}
	v := reflect.ValueOf(&st).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Type() == reflect.TypeOf(atomic.Int64{}) && !listed[(*atomic.Int64)(f.Addr().UnsafePointer())] {
			t.Errorf("worker.Stats.%s is not in Counters(): a resume would restart it from zero", v.Type().Field(i).Name)
		}
	}
	a := &node{split: &splitter{}}
	i := int64(1)
	for _, c := range a.st.Counters() {
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
	want := a.st.Counters()
	for name, c := range b.st.Counters() {
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
	var chains fetch.Redirects
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
		chains.Put(u, 1)
	}
	s.process(&splitMsg{urls: []splitURL{{URL: local, Kind: tracefile.URLRedirect}, {URL: remote, Kind: tracefile.URLRedirect}}})
	if n, hops := chains.Len(), chains.Take(local); n != 1 || hops != 1 {
		t.Fatalf("after routing: %d targets, %d hops to the local one; want only the queued local target, 1 hop", n, hops)
	}
	// The same target again, known to the DUE now: forgotten.
	chains.Put(local, 2)
	s.process(&splitMsg{urls: []splitURL{{URL: local, Kind: tracefile.URLRedirect}}})
	if n := chains.Len(); n != 0 {
		t.Fatalf("a target the DUE knew is still remembered: %d targets", n)
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
		part := filepath.Join(stateDir(cfg.OutDir, 0), checkpoint.DirName, "frontier")
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
