package recorder

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/splitter"
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
	a := &node{split: splitter.New(splitter.Options{})}
	i := int64(1)
	for _, c := range a.st.Counters() {
		c.Store(i)
		i++
	}
	var buf bytes.Buffer
	if err := (countersPart{a}).Save(&buf); err != nil {
		t.Fatal(err)
	}
	b := &node{split: splitter.New(splitter.Options{})}
	if err := (countersPart{b}).Load(&buf); err != nil {
		t.Fatal(err)
	}
	want := a.st.Counters()
	for name, c := range b.st.Counters() {
		if c.Load() != want[name].Load() {
			t.Errorf("counter %s: %d after load, saved %d", name, c.Load(), want[name].Load())
		}
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
