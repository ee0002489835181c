// Package policy holds the cache replacement policies that crawltrace
// replays traces through: the paper's INFINITE, MIN, LRU, CLOCK, RANDOM and
// STATIC, and FIFO, SIEVE, S3-FIFO, ARC, 2Q and W-TinyLFU beyond it. One file
// per policy.
//
// Every policy is a single-threaded core: it is not safe for concurrent use,
// and parallelism lives outside it (the replay package runs one policy per
// goroutine). Keys are 64-bit URL fingerprints.
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
	// Seed seeds RANDOM's victim choice (and any other randomized policy).
	Seed uint64
	// Trace is the whole request sequence, for offline policies: MIN needs
	// next-use times, STATIC needs popularity counts. Online policies ignore it.
	Trace []uint64
	// NextUse, when set, holds for each position i of Trace the position of
	// the next request for Trace[i] (or -1); MIN computes it when nil.
	NextUse []int64
	// ChargeStaticLoads makes STATIC count its k preloads as misses.
	ChargeStaticLoads bool
}
