package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// events is what happened at a cut, in order, as the fake nodes and the
// fake transit see it.
type events struct {
	mu sync.Mutex
	l  []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	e.l = append(e.l, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.l)
}

// at is the index of ev in l; it fails t if ev is not there.
func at(t *testing.T, l []string, ev string) int {
	t.Helper()
	i := slices.Index(l, ev)
	if i < 0 {
		t.Fatalf("no %q in %q", ev, l)
	}
	return i
}

// fakeNode is a node whose state is owned by one goroutine, as a
// splitter's is: it takes cuts from a channel, "flushes" (hands on what
// it was sending), then runs the cut.
type fakeNode struct {
	id     int
	ev     *events
	cuts   chan func()
	taken  chan struct{} // one value per cut taken
	gate   chan struct{} // if not nil, the node flushes only once it is closed
	inCut  atomic.Bool   // the node's goroutine is running a cut
	parts  []*fakePart
	commit func() // run by Committed, if set

	attempts  int64
	committed int
}

func newFakeNode(t *testing.T, ev *events, id int) *fakeNode {
	n := &fakeNode{id: id, ev: ev, cuts: make(chan func()), taken: make(chan struct{}, 16)}
	n.parts = []*fakePart{
		{n: n, bytesPart: bytesPart{name: "a", data: []byte(fmt.Sprintf("node %d a", id))}},
		{n: n, bytesPart: bytesPart{name: "b", data: []byte(fmt.Sprintf("node %d b", id))}},
	}
	return n
}

// start runs the node's goroutine until the test ends.
func (n *fakeNode) start(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case cut := <-n.cuts:
				n.taken <- struct{}{}
				if n.gate != nil {
					<-n.gate
				}
				n.ev.add("flush %d", n.id)
				n.inCut.Store(true)
				cut()
				n.inCut.Store(false)
				n.ev.add("resume %d", n.id)
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func (n *fakeNode) ID() int { return n.id }

func (n *fakeNode) Park(at func()) { n.cuts <- at }

func (n *fakeNode) Parts() []Part {
	ps := make([]Part, len(n.parts))
	for i, p := range n.parts {
		ps[i] = p
	}
	return ps
}

func (n *fakeNode) Stopped(m *Meta) {
	m.Attempts = n.attempts
	m.CrawlDone = true
}

func (n *fakeNode) Committed() {
	n.ev.add("committed %d", n.id)
	n.committed++
	if n.commit != nil {
		n.commit()
	}
}

// fakePart is a bytesPart of a node that notes each save and whether it
// was on its node's goroutine during a cut.
type fakePart struct {
	bytesPart
	n      *fakeNode
	onNode []bool // per Save: on the node's goroutine, in a cut
}

func (p *fakePart) Save(w io.Writer) error {
	p.n.ev.add("save %d %s", p.n.id, p.name)
	p.onNode = append(p.onNode, p.n.inCut.Load())
	return p.bytesPart.Save(w)
}

// fakeTransit notes when it is snapshot; snapped is closed at the first.
type fakeTransit struct {
	ev      *events
	once    sync.Once
	snapped chan struct{}
}

func (f *fakeTransit) Snapshot() {
	f.ev.add("snapshot")
	f.once.Do(func() { close(f.snapped) })
}

func newFakes(t *testing.T, nodes int, running bool) (*events, []*fakeNode, []Node, *fakeTransit) {
	ev := &events{}
	var fs []*fakeNode
	var ns []Node
	for id := range nodes {
		n := newFakeNode(t, ev, id)
		if running {
			n.start(t)
		}
		fs = append(fs, n)
		ns = append(ns, n)
	}
	return ev, fs, ns, &fakeTransit{ev: ev, snapped: make(chan struct{})}
}

// firstCheckpoint has a coordinator of three running fake nodes take a
// checkpoint into dir.
func firstCheckpoint(t *testing.T, dir string) (*Coordinator, []*fakeNode) {
	t.Helper()
	_, fs, ns, tr := newFakes(t, 3, true)
	k := NewCoordinator(Options{OutDir: dir, CrawlID: "crawl", Transit: tr}, ns)
	if err := k.Periodic(); err != nil {
		t.Fatal(err)
	}
	return k, fs
}

// checkLoaded checks that every part of every node loaded want(part).
func checkLoaded(t *testing.T, fs []*fakeNode, got []map[string]string, want func(p *fakePart) []byte) {
	t.Helper()
	for _, n := range fs {
		for _, p := range n.parts {
			if w := string(want(p)); got[n.id][p.name] != w {
				t.Errorf("node %d part %s: loaded %q, want %q", n.id, p.name, got[n.id][p.name], w)
			}
		}
	}
}

// loadAll finds the nodes' checkpoint and loads it into fresh parts; it
// returns the generation and each node's bytes per part name.
func loadAll(t *testing.T, dir string, fs []*fakeNode) (*Set, []map[string]string) {
	t.Helper()
	var ids []int
	for _, n := range fs {
		ids = append(ids, n.id)
	}
	set, err := Find(dir, "crawl", ids)
	if err != nil || set == nil {
		t.Fatalf("Find: %v, %v", set, err)
	}
	var out []map[string]string
	for _, n := range fs {
		got := map[string]string{}
		var ps []Part
		var fps []*fakePart
		for _, p := range n.parts {
			fp := &fakePart{n: n, bytesPart: bytesPart{name: p.name}}
			ps, fps = append(ps, fp), append(fps, fp)
		}
		if err := Load(set.Dirs[n.id], set.Meta[n.id], ps); err != nil {
			t.Fatal(err)
		}
		for _, p := range fps {
			got[p.name] = string(p.loaded)
		}
		out = append(out, got)
	}
	return set, out
}

// The cut waits until every node has parked (handed on what it was
// sending) before it snapshots what is in transit; then each node saves
// its parts on its own goroutine; each is committed only once all have
// saved; the checkpoint is the generation after the one resumed from.
func TestCoordinatorCut(t *testing.T) {
	dir := t.TempDir()
	ev, fs, ns, tr := newFakes(t, 3, true)
	fs[2].gate = make(chan struct{})
	k := NewCoordinator(Options{OutDir: dir, CrawlID: "crawl", Gen: 4, Transit: tr}, ns)
	res := make(chan error, 1)
	go func() { res <- k.Periodic() }()
	<-fs[2].taken
	// Node 2 has taken the cut but not flushed. A coordinator that did
	// not wait for it would snapshot now; one that does cannot until the
	// gate opens. The timer only bounds how long the test waits for a
	// snapshot that must not come.
	select {
	case <-tr.snapped:
		t.Error("the transit was snapshot before every node parked")
	case <-time.After(200 * time.Millisecond):
	}
	close(fs[2].gate)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	l := ev.list()
	snap := at(t, l, "snapshot")
	for _, n := range fs {
		if f := at(t, l, fmt.Sprintf("flush %d", n.id)); f > snap {
			t.Errorf("node %d flushed after the snapshot: %q", n.id, l)
		}
		for _, p := range n.parts {
			if s := at(t, l, fmt.Sprintf("save %d %s", n.id, p.name)); s < snap {
				t.Errorf("node %d saved %s before the snapshot: %q", n.id, p.name, l)
			}
			if !slices.Equal(p.onNode, []bool{true}) {
				t.Errorf("node %d part %s: saved on its goroutine in a cut: %v, want [true]", n.id, p.name, p.onNode)
			}
		}
	}
	for _, n := range fs {
		c := at(t, l, fmt.Sprintf("committed %d", n.id))
		for _, m := range fs {
			for _, p := range m.parts {
				if s := at(t, l, fmt.Sprintf("save %d %s", m.id, p.name)); s > c {
					t.Errorf("node %d committed before node %d saved %s: %q", n.id, m.id, p.name, l)
				}
			}
		}
	}
	set, got := loadAll(t, dir, fs)
	if set.Gen != 5 {
		t.Errorf("generation %d, want 5 (the one after the resumed 4)", set.Gen)
	}
	checkLoaded(t, fs, got, func(p *fakePart) []byte { return p.data })
	for _, n := range fs {
		m := set.Meta[n.id]
		if m.CrawlID != "crawl" || m.Node != n.id || m.Stop != "" || m.Attempts != 0 || m.CrawlDone {
			t.Errorf("node %d: periodic checkpoint's description %+v", n.id, m)
		}
		state := StateDir(dir, n.id)
		for _, name := range []string{TmpName, OldName} {
			if _, err := os.Stat(filepath.Join(state, name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("node %d: %s left behind (%v)", n.id, name, err)
			}
		}
	}
	if k.Taken() != 1 || k.Last() <= 0 {
		t.Errorf("Taken %d, Last %v; want 1 and the time it took", k.Taken(), k.Last())
	}
}

// A node that fails to save fails the checkpoint: no node is committed,
// every node keeps its previous checkpoint, and every node goes on (the
// next cut finds them all).
func TestCoordinatorFailedNodeKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	k, fs := firstCheckpoint(t, dir)
	for _, n := range fs {
		for _, p := range n.parts {
			p.data = append([]byte("newer "), p.data...)
		}
	}
	boom := errors.New("disk full")
	fs[1].parts[1].err = boom
	err := k.Periodic()
	if !errors.Is(err, boom) {
		t.Fatalf("Periodic with a failing node: %v, want its error", err)
	}
	for _, n := range fs {
		if n.committed != 1 {
			t.Errorf("node %d told of %d commits, want 1 (the first checkpoint only)", n.id, n.committed)
		}
	}
	set, got := loadAll(t, dir, fs)
	if set.Gen != 1 {
		t.Fatalf("after the failed checkpoint the nodes resume from generation %d, want 1", set.Gen)
	}
	checkLoaded(t, fs, got, func(p *fakePart) []byte { return p.data[len("newer "):] }) // the first checkpoint's
	fs[1].parts[1].err = nil
	if err := k.Periodic(); err != nil {
		t.Fatalf("the cut after a failed one: %v", err)
	}
	set, got = loadAll(t, dir, fs)
	if set.Gen != 3 {
		t.Errorf("generation %d after a failed one, want 3 (a failed generation's number is not reused)", set.Gen)
	}
	checkLoaded(t, fs, got, func(p *fakePart) []byte { return p.data })
	if k.Taken() != 2 {
		t.Errorf("Taken %d, want 2", k.Taken())
	}
}

// The previous checkpoints are removed only once every node has switched
// to the new one: when the first node is told, every node's checkpoint/
// is the new generation and the nodes not yet told still hold the
// previous one in checkpoint.old/.
func TestCoordinatorRemovesOldAfterAllCommitted(t *testing.T) {
	dir := t.TempDir()
	k, fs := firstCheckpoint(t, dir)
	checked := false
	fs[0].commit = func() {
		checked = true
		for _, n := range fs {
			state := StateDir(dir, n.id)
			m, err := readMeta(filepath.Join(state, DirName), n.id)
			if err != nil || m.Generation != 2 {
				t.Errorf("node %d: checkpoint/ is generation %d (%v) when node 0 is told; want 2", n.id, m.Generation, err)
			}
			old := filepath.Join(state, OldName)
			if n.id == 0 {
				if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("node 0 told before its checkpoint.old/ was removed (%v)", err)
				}
				continue
			}
			if m, err := readMeta(old, n.id); err != nil || m.Generation != 1 {
				t.Errorf("node %d: checkpoint.old/ is generation %d (%v) when node 0 is told; want 1", n.id, m.Generation, err)
			}
		}
	}
	if err := k.Periodic(); err != nil {
		t.Fatal(err)
	}
	if !checked {
		t.Fatal("node 0 was not told of the commit")
	}
	for _, n := range fs {
		if _, err := os.Stat(filepath.Join(StateDir(dir, n.id), OldName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("node %d: checkpoint.old/ left behind (%v)", n.id, err)
		}
	}
}

// The checkpoint of a clean stop parks no node (they have stopped),
// snapshots the transit first, records why the crawl stopped and what
// each node knows of its stop.
func TestCoordinatorFinal(t *testing.T) {
	dir := t.TempDir()
	ev, fs, ns, tr := newFakes(t, 2, false)
	for _, n := range fs {
		n.attempts = int64(10 + n.id)
	}
	k := NewCoordinator(Options{OutDir: dir, CrawlID: "crawl", Gen: 7, Transit: tr}, ns)
	if err := k.Final("done"); err != nil {
		t.Fatal(err)
	}
	l := ev.list()
	if slices.ContainsFunc(l, func(s string) bool { return len(s) > 5 && s[:5] == "flush" }) {
		t.Errorf("Final parked a stopped node: %q", l)
	}
	snap := at(t, l, "snapshot")
	for _, n := range fs {
		if at(t, l, fmt.Sprintf("save %d a", n.id)) < snap {
			t.Errorf("node %d saved before the snapshot: %q", n.id, l)
		}
		if n.committed != 1 {
			t.Errorf("node %d told of %d commits, want 1", n.id, n.committed)
		}
	}
	set, got := loadAll(t, dir, fs)
	if set.Gen != 8 {
		t.Errorf("generation %d, want 8", set.Gen)
	}
	for _, n := range fs {
		m := set.Meta[n.id]
		if m.Stop != "done" || m.Attempts != n.attempts || !m.CrawlDone {
			t.Errorf("node %d: final checkpoint's description %+v; want stop done, %d attempts, crawl done", n.id, m, n.attempts)
		}
		if got[n.id]["b"] != string(n.parts[1].data) {
			t.Errorf("node %d: part b loaded %q", n.id, got[n.id]["b"])
		}
	}
	if k.Taken() != 1 {
		t.Errorf("Taken %d, want 1", k.Taken())
	}
}

// Run takes periodic checkpoints until stopped; one that fails is
// reported and ends Run, and Stop still returns. With no period it takes
// none.
func TestCoordinatorRun(t *testing.T) {
	dir := t.TempDir()
	_, fs, ns, tr := newFakes(t, 2, true)
	boom := errors.New("no space")
	fs[1].parts[0].err = boom
	failed := make(chan error, 1)
	k := NewCoordinator(Options{OutDir: dir, CrawlID: "crawl", Every: time.Millisecond, Transit: tr, OnError: func(err error) { failed <- err }}, ns)
	go k.Run()
	select {
	case err := <-failed:
		if !errors.Is(err, boom) {
			t.Errorf("OnError got %v, want the node's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run reported no failure")
	}
	k.Stop()
	if k.Taken() != 0 {
		t.Errorf("Taken %d after a failed checkpoint, want 0", k.Taken())
	}

	idle := NewCoordinator(Options{OutDir: dir, CrawlID: "crawl", Transit: tr}, ns)
	go idle.Run()
	idle.Stop()
	if idle.Taken() != 0 {
		t.Errorf("Taken %d with no period, want 0", idle.Taken())
	}
}
