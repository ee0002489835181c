// Package counters is what follows from a stage's counters once the
// stage has declared them: a struct whose every field is a count, an
// int64 (or an atomic.Int64 in the copy the stage updates while it runs)
// with a JSON name. The sum over nodes, the snapshot of the live copy,
// and the checkpoint's map by name are one generic function each here,
// so that a counter added to the declaration needs no other edit to be
// summed, saved, restored, written to stats.json and served as a metric
// (recorder/monitor reflects the same JSON names).
//
// The functions panic when given a struct with a field that is not a
// count or has no JSON name: a declaration error, which the stage's own
// tests find with [Check].
package counters

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
)

var (
	int64Type  = reflect.TypeFor[int64]()
	atomicType = reflect.TypeFor[atomic.Int64]()
)

// layout is the JSON name of every field of a counters struct, in
// declaration order, and whether the fields are atomic.
type layout struct {
	names  []string
	atomic bool
}

var layouts sync.Map // reflect.Type -> *layout or error

func layoutOf(t reflect.Type) (*layout, error) {
	if v, ok := layouts.Load(t); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*layout), nil
	}
	l, err := newLayout(t)
	if err != nil {
		layouts.Store(t, err)
		return nil, err
	}
	layouts.Store(t, l)
	return l, nil
}

func newLayout(t reflect.Type) (*layout, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("counters: %s is not a struct", t)
	}
	l := &layout{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported():
			return nil, fmt.Errorf("counters: %s.%s is not exported", t, f.Name)
		case f.Type != int64Type && f.Type != atomicType:
			return nil, fmt.Errorf("counters: %s.%s is a %s, not an int64 or an atomic.Int64", t, f.Name, f.Type)
		case i > 0 && (f.Type == atomicType) != l.atomic:
			return nil, fmt.Errorf("counters: %s.%s: the fields of %s are all int64 or all atomic.Int64", t, f.Name, t)
		case name == "" || name == "-":
			return nil, fmt.Errorf("counters: %s.%s has no JSON name", t, f.Name)
		case seen[strings.ToLower(name)]:
			// encoding/json matches names without regard to case.
			return nil, fmt.Errorf("counters: %s.%s: JSON name %q twice", t, f.Name, name)
		}
		l.atomic = f.Type == atomicType
		seen[strings.ToLower(name)] = true
		l.names = append(l.names, name)
	}
	return l, nil
}

func mustLayout(t reflect.Type) *layout {
	l, err := layoutOf(t)
	if err != nil {
		panic(err)
	}
	return l
}

// Check reports whether S declares counters: every field an exported
// int64 (or every field an atomic.Int64) with a JSON name of its own.
func Check[S any]() error {
	_, err := layoutOf(reflect.TypeFor[S]())
	return err
}

// Names are the JSON names of S's counters, in declaration order.
func Names[S any]() []string {
	return append([]string(nil), mustLayout(reflect.TypeFor[S]()).names...)
}

// get is field i of v, atomically loaded when it is an atomic.Int64.
func get(v reflect.Value, i int, isAtomic bool) int64 {
	if isAtomic {
		return (*atomic.Int64)(v.Field(i).Addr().UnsafePointer()).Load()
	}
	return v.Field(i).Int()
}

// sameNames checks that From and To declare the same counters (the live
// and the plain instance of one declaration).
func sameNames(from, to reflect.Type) (*layout, *layout) {
	lf, lt := mustLayout(from), mustLayout(to)
	if len(lf.names) != len(lt.names) {
		panic(fmt.Sprintf("counters: %s and %s declare different counters", from, to))
	}
	for i := range lf.names {
		if lf.names[i] != lt.names[i] {
			panic(fmt.Sprintf("counters: %s and %s declare different counters", from, to))
		}
	}
	return lf, lt
}

// Load is a snapshot of live, a struct of atomic.Int64 counters (or of
// int64 ones), as S, the plain struct declaring the same counters. Each
// counter is loaded atomically; the snapshot is not one instant across
// counters.
func Load[S, L any](live *L) S {
	var s S
	lf, _ := sameNames(reflect.TypeFor[L](), reflect.TypeFor[S]())
	src, dst := reflect.ValueOf(live).Elem(), reflect.ValueOf(&s).Elem()
	for i := range lf.names {
		dst.Field(i).SetInt(get(src, i, lf.atomic))
	}
	return s
}

// Store sets live's counters to v's.
func Store[L, S any](live *L, v S) {
	lt, _ := sameNames(reflect.TypeFor[L](), reflect.TypeFor[S]())
	src, dst := reflect.ValueOf(&v).Elem(), reflect.ValueOf(live).Elem()
	for i := range lt.names {
		x := src.Field(i).Int()
		if lt.atomic {
			(*atomic.Int64)(dst.Field(i).Addr().UnsafePointer()).Store(x)
		} else {
			dst.Field(i).SetInt(x)
		}
	}
}

// Add adds every counter of src to dst's.
func Add[S any](dst *S, src S) {
	l := mustLayout(reflect.TypeFor[S]())
	if l.atomic {
		panic(fmt.Sprintf("counters: Add of atomic %T: take a snapshot first", src))
	}
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(&src).Elem()
	for i := range l.names {
		d.Field(i).SetInt(d.Field(i).Int() + s.Field(i).Int())
	}
}

// Put writes v's counters into m by their JSON names.
func Put[S any](m map[string]int64, v S) {
	l := mustLayout(reflect.TypeFor[S]())
	if l.atomic {
		panic(fmt.Sprintf("counters: Put of atomic %T: take a snapshot first", v))
	}
	s := reflect.ValueOf(&v).Elem()
	for i, name := range l.names {
		m[name] = s.Field(i).Int()
	}
}

// Get reads S's counters from m by their JSON names, 0 for a name m
// lacks.
func Get[S any](m map[string]int64) S {
	var v S
	l := mustLayout(reflect.TypeFor[S]())
	if l.atomic {
		panic(fmt.Sprintf("counters: Get of atomic %T", v))
	}
	d := reflect.ValueOf(&v).Elem()
	for i, name := range l.names {
		d.Field(i).SetInt(m[name])
	}
	return v
}
