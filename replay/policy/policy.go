// Package policy holds the cache replacement policies that crawltrace
// replays traces through: the paper's INFINITE, MIN, LRU, CLOCK, RANDOM and
// STATIC, and FIFO, SIEVE, S3-FIFO, ARC, 2Q and W-TinyLFU beyond it, plus
// CLOCK and RANDOM in the scatter table with circular chains that the paper
// recommends for a crawler. One file per policy.
//
// [New] builds a policy by name ([Names] lists them) and returns an error
// for a bad name or size; the per-policy constructors (NewLRU, ...) panic
// on a size below 1 instead. [NextUse] computes the
// next-use times MIN needs; [MemoryPerEntry] estimates each policy's bytes
// per cached key. All policies follow the paper's accounting: a request is
// a hit or a miss, and a miss adds the key (a cache with fewer than k keys
// just adds it, a full one first evicts according to the policy). STATIC,
// which never admits, is the exception.
//
// The policies are built for replaying billions of requests: hash tables
// keyed by the fingerprint with open addressing, index-based lists over
// slabs, and no allocation per request once a cache is full. Every
// structure grows with the keys the cache holds (doubling, up to the size),
// never to the nominal size, so a cache larger than its trace's distinct
// keys costs what those keys cost ([Bytes] measures it); W-TinyLFU's sketch,
// whose width sets its estimates, is the one exception.
//
// Every policy is a single-threaded core: it is not safe for concurrent use,
// and parallelism lives outside it (the replay package runs one policy per
// goroutine). Keys are 64-bit URL fingerprints; any uint64 is a valid key.
package policy

// Policy is a cache of at most Size keys fed one request at a time.
type Policy interface {
	// Access requests key and reports whether it was a hit. On a miss the
	// key is admitted according to the policy (evicting if full).
	Access(key uint64) (hit bool)
	// Name is the policy's lower-case name, e.g. "lru".
	Name() string
	// Len is the number of keys cached now.
	Len() int
}

// Options carry what some policies need beyond a size.
type Options struct {
	// Seed seeds the victim choice of "random" and "random-scatter" (the
	// same seed gives both the same victims).
	Seed uint64
	// Trace is the whole request sequence, for offline policies: MIN needs
	// next-use times, STATIC needs popularity counts; for those two it must
	// not be nil. Online policies ignore it. MIN must then be fed exactly
	// Trace[0], Trace[1], ... (anything else panics: a programming error).
	Trace []uint64
	// NextUse, when set, holds for each position i of Trace the position of
	// the next request for Trace[i] (or -1); MIN computes it when nil.
	NextUse []int64
	// ChargeStaticLoads makes STATIC pay for its preloads: the first request
	// for each preloaded key counts as a miss (see [Static]).
	ChargeStaticLoads bool
	// Cancel, when not nil, stops the whole-trace passes of the offline
	// policies (STATIC's counts, MIN's next-use times) once it is closed:
	// they look at it every [CheckEvery] requests, and New then returns
	// context.Canceled. Pass a context's Done channel.
	Cancel <-chan struct{}
}

// CheckEvery is how many requests a pass over a whole trace handles
// between looks at its cancel channel: a look costs next to nothing at
// that rate, and a pass stops within a few milliseconds.
const CheckEvery = 1 << 16

// Canceled reports whether cancel (nil: never) is closed.
func Canceled(cancel <-chan struct{}) bool {
	if cancel == nil {
		return false
	}
	select {
	case <-cancel:
		return true
	default:
		return false
	}
}
