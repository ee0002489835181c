package policy

import (
	"fmt"
	"strings"
)

// constructors lists every policy in the order [Names] reports them.
var constructors = []struct {
	name string
	new  func(size int, opts Options) (Policy, error)
}{
	{"infinite", func(int, Options) (Policy, error) { return NewInfinite(), nil }},
	{"min", func(size int, o Options) (Policy, error) { return NewMIN(size, o) }},
	{"lru", func(size int, _ Options) (Policy, error) { return NewLRU(size), nil }},
	{"clock", func(size int, _ Options) (Policy, error) { return NewCLOCK(size), nil }},
	{"random", func(size int, o Options) (Policy, error) { return NewRandom(size, o.Seed), nil }},
	{"static", func(size int, o Options) (Policy, error) { return NewStatic(size, o) }},
	{"fifo", func(size int, _ Options) (Policy, error) { return NewFIFO(size), nil }},
	{"sieve", func(size int, _ Options) (Policy, error) { return NewSIEVE(size), nil }},
	{"s3fifo", func(size int, _ Options) (Policy, error) { return NewS3FIFO(size), nil }},
	{"arc", func(size int, _ Options) (Policy, error) { return NewARC(size), nil }},
	{"2q", func(size int, _ Options) (Policy, error) { return NewTwoQ(size), nil }},
	{"wtinylfu", func(size int, _ Options) (Policy, error) { return NewWTinyLFU(size), nil }},
	{"clock-scatter", func(size int, _ Options) (Policy, error) { return NewClockScatter(size), nil }},
	{"random-scatter", func(size int, o Options) (Policy, error) { return NewRandomScatter(size, o.Seed), nil }},
}

// MaxSize is the largest cache size [New] accepts: the policies index their
// entries with 32-bit integers (and ARC keeps 2 x size entries).
const MaxSize = 1<<30 - 1

// Names returns the name of every policy [New] knows, in a fixed order: the
// paper's six first, then the others, then the scatter-table variants.
func Names() []string {
	names := make([]string, len(constructors))
	for i, c := range constructors {
		names[i] = c.name
	}
	return names
}

// New returns the policy called name (case-insensitive, see [Names]) with
// room for size keys. Every policy but "infinite" needs size >= 1;
// "infinite" ignores size; the others accept at most [MaxSize]. "min" and "static" need opts.Trace (a nil Trace
// is an error; an empty one is not).
func New(name string, size int, opts Options) (Policy, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, c := range constructors {
		if c.name != name {
			continue
		}
		if name != "infinite" && size < 1 {
			return nil, fmt.Errorf("policy: %s: size must be at least 1, got %d", name, size)
		}
		if name != "infinite" && size > MaxSize {
			return nil, fmt.Errorf("policy: %s: size %d is above the maximum %d", name, size, MaxSize)
		}
		return c.new(size, opts)
	}
	return nil, fmt.Errorf("policy: unknown policy %q (known: %s)", name, strings.Join(Names(), ", "))
}

// checkOffline is what the offline policies' constructors, which return
// errors, require: a size of at least 1 and the whole trace.
func checkOffline(name string, size int, opts Options) error {
	if size < 1 {
		return fmt.Errorf("policy: %s: size must be at least 1, got %d", name, size)
	}
	if opts.Trace == nil {
		return fmt.Errorf("policy: %s: needs the whole trace (Options.Trace is nil)", name)
	}
	return nil
}

// mustSize panics on a size below 1: the New* constructors are for callers
// that already validated their sizes (New returns an error instead).
func mustSize(name string, size int) {
	if size < 1 {
		panic(fmt.Sprintf("policy: %s: size must be at least 1, got %d", name, size))
	}
}
