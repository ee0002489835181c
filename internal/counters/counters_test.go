package counters

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

type count interface{ int64 | atomic.Int64 }

// stage is a declaration as a stage writes one: the live copy is
// stage[atomic.Int64], a snapshot stage[int64].
type stage[T count] struct {
	Pages T `json:"pages"`
	Bytes T `json:"bytes,omitempty"`
	Links T `json:"links"`
}

// A live copy updated from many goroutines, snapshotted, summed, saved
// by name and restored gives the counts a plain model keeps.
func TestLiveSnapshotSumAndNames(t *testing.T) {
	var live stage[atomic.Int64]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				live.Pages.Add(1)
				live.Bytes.Add(int64(i))
				if g == 0 {
					live.Links.Add(3)
				}
			}
		})
	}
	wg.Wait()
	snap := Load[stage[int64]](&live)
	if want := (stage[int64]{Pages: 4000, Bytes: 4 * 999 * 1000 / 2, Links: 3000}); snap != want {
		t.Fatalf("snapshot %+v, want %+v", snap, want)
	}

	sum := stage[int64]{Pages: 1, Bytes: 2, Links: 3}
	Add(&sum, snap)
	if want := (stage[int64]{Pages: 4001, Bytes: 4*999*1000/2 + 2, Links: 3003}); sum != want {
		t.Errorf("sum %+v, want %+v", sum, want)
	}

	m := map[string]int64{"other": 9}
	Put(m, snap)
	if want := map[string]int64{"other": 9, "pages": 4000, "bytes": 4 * 999 * 1000 / 2, "links": 3000}; !maps.Equal(m, want) {
		t.Errorf("by name %v, want %v", m, want)
	}
	delete(m, "links")
	back := Get[stage[int64]](m)
	if want := (stage[int64]{Pages: 4000, Bytes: 4 * 999 * 1000 / 2}); back != want {
		t.Errorf("from names %+v, want %+v (a missing name is 0)", back, want)
	}

	var restored stage[atomic.Int64]
	Store(&restored, back)
	if restored.Pages.Load() != 4000 || restored.Links.Load() != 0 {
		t.Errorf("restored pages %d, links %d", restored.Pages.Load(), restored.Links.Load())
	}
	if got := Names[stage[atomic.Int64]](); strings.Join(got, ",") != "pages,bytes,links" {
		t.Errorf("names %v", got)
	}
}

// What is not a declaration of counters is refused with an error naming
// the field.
func TestCheckRefusesWhatIsNotCounters(t *testing.T) {
	type noName struct {
		A int64 `json:"a"`
		B int64
	}
	type notCount struct {
		A int64   `json:"a"`
		R float64 `json:"r"`
	}
	type twice struct {
		A int64 `json:"a"`
		B int64 `json:"A"`
	}
	type mixed struct {
		A int64        `json:"a"`
		B atomic.Int64 `json:"b"`
	}
	type hidden struct {
		A int64 `json:"a"`
		b int64
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{Check[noName](), "noName.B has no JSON name"},
		{Check[notCount](), "notCount.R is a float64"},
		{Check[twice](), `JSON name "A" twice`},
		{Check[mixed](), "are all int64 or all atomic.Int64"},
		{Check[hidden](), "hidden.b is not exported"},
		{Check[int](), "int is not a struct"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one with %q", c.err, c.want)
		}
	}
	if err := Check[stage[int64]](); err != nil {
		t.Error(err)
	}
	_ = hidden{}.b
}

// Load between two declarations of different counters is a declaration
// error: it panics rather than copy counters under the wrong names.
func TestLoadOfOtherCountersPanics(t *testing.T) {
	type other struct {
		Pages int64 `json:"pages"`
		Links int64 `json:"links"`
		Bytes int64 `json:"bytes"`
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	var live stage[atomic.Int64]
	Load[other](&live)
}
