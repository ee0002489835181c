package recorder

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/counters"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// Every declared counter of a node (its workers' and its splitter's) is
// in its checkpoint: a save and load gives each one back, by name.
func TestEveryCounterCheckpointed(t *testing.T) {
	if err := counters.Check[worker.Counters[int64]](); err != nil {
		t.Fatal(err)
	}
	if err := counters.Check[splitter.Stats](); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for i, name := range append(counters.Names[worker.Counters[int64]](), counters.Names[splitter.Stats]()...) {
		if _, dup := want[name]; dup {
			t.Fatalf("counter %s declared twice", name)
		}
		want[name] = int64(100 + i)
	}
	a := &node{split: splitter.New(splitter.Options{})}
	a.st.Restore(worker.Snapshot{Counters: counters.Get[worker.Counters[int64]](want)})
	a.split.CountersPart().Load(want)
	var buf bytes.Buffer
	if err := (countersPart{a}).Save(&buf); err != nil {
		t.Fatal(err)
	}
	b := &node{split: splitter.New(splitter.Options{})}
	if err := (countersPart{b}).Load(&buf); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	counters.Put(got, b.st.Counts())
	counters.Put(got, b.split.Published().Stats)
	if !maps.Equal(got, want) {
		t.Errorf("counters after a save and load:\n%v\nsaved:\n%v", got, want)
	}
}

// A counters part written before the counters were declared once (by
// main at 2f15d2f: testdata/counters-2f15d2f.gob, every worker counter
// set to 1000 + its rank by its old checkpoint name, the splitter's to
// 2001..2010 in their declaration order then) loads into today's
// counters under their stats.json names.
func TestCountersPartOfEarlierVersionLoads(t *testing.T) {
	raw, err := os.ReadFile("testdata/counters-2f15d2f.gob")
	if err != nil {
		t.Fatal(err)
	}
	n := &node{split: splitter.New(splitter.Options{})}
	if err := (countersPart{n}).Load(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	// The old names, sorted, were the ranks: a reference table written
	// out by hand, not derived from the code under test.
	want := map[string]int64{
		"fetch_attempts": 1000, "bad_links": 1001, "bytes": 1002, "charset_unknown_pages": 1003,
		"encoding_errors": 1004, "fetch_errors": 1005, "filtered": 1006, "html_pages": 1007,
		"links_dropped": 1008, "non_utf8_pages": 1009, "not_html_skipped": 1010, "redirects": 1011,
		"redirects_cut": 1012, "retry_after_retries": 1013, "retry_after_waits": 1014,
		"robots_excluded": 1015, "robots_fetches": 1016, "robots_redirects": 1017,
		"robots_refetches": 1018, "robots_retries": 1019, "truncated": 1020,
		"urls_logged": 2001, "local": 2002, "cross": 2003, "splitter_cache_suppressed": 2004,
		"splitter_cache_sent": 2005, "batches_sent": 2006, "urls_sent": 2007, "urls_received": 2008,
		"batches_received": 2009, "urls_admitted": 2010,
	}
	got := map[string]int64{}
	counters.Put(got, n.st.Counts())
	counters.Put(got, n.split.Published().Stats)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %d, want %d", name, got[name], w)
		}
	}
	for name, v := range got {
		if _, ok := want[name]; !ok && v != 0 {
			t.Errorf("%s = %d, a counter the old checkpoint did not have", name, v)
		}
	}
	d := n.st.Snapshot()
	if d.ByStatus[200] != 5 || d.ByStatus[404] != 2 || d.ByStatus[0] != 1 || d.RobotsByStatus[200] != 3 ||
		d.BytesByStatus[200] != 5000 || d.BytesByStatus[404] != 20 || d.FilterReasons["scheme"] != 4 {
		t.Errorf("counts by status and reason: %+v", d.Detail)
	}
	if n.st.PageSeq.Load() != 777 || n.resume != (resumeCounters{Resumes: 2, DiscardedPages: 3, DiscardedURLs: 4, DiscardedWARCBytes: 5}) {
		t.Errorf("page seq %d, resume %+v", n.st.PageSeq.Load(), n.resume)
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
