// Package prefetch issues CPU cache prefetch hints for a batch of
// addresses, so that a loop over hash-table lookups can overlap their cache
// misses instead of stalling on each one. A hint never faults and changes
// nothing but timing; on architectures without an assembly version,
// [Addrs] does nothing.
package prefetch
