// Package due is the crawler's duplicate URL eliminator (DUE), the stage
// between the host splitter and the frontier in Mercator's pipeline: a set
// of 64-bit URL fingerprints that admits each URL once.
//
// [Memory] keeps every fingerprint in one open-addressing table, about 10
// bytes per URL. [Disk] is Mercator's disk-based DUE (Heydon and Najork;
// Broder, Najork and Wiener, section 2): a sorted fingerprint file on
// disk, an in-memory buffer of fingerprints added since the last merge,
// and a cache of popular fingerprints in front of both.
//
// # Checkpoint format
//
// Set.Save writes, and Set.Load reads, a little-endian uint64 count n
// followed by n little-endian uint64 fingerprints, in no particular order
// (Disk writes them sorted). Either kind loads what the other saved.
//
// Sets are not safe for concurrent use; the host splitter goroutine owns
// its node's set.
package due

import "io"

// Set is a duplicate URL eliminator.
type Set interface {
	// Add inserts fp and reports whether it was new.
	Add(fp uint64) bool
	// Len is the number of distinct fingerprints added.
	Len() int
	// Bytes is the memory the set holds.
	Bytes() int
	// Save writes the set in the checkpoint format.
	Save(w io.Writer) error
	// Load adds the fingerprints of a saved set.
	Load(r io.Reader) error
	// Close releases the set's files, if any.
	Close() error
}

var _ Set = (*Memory)(nil)
