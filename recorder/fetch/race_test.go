//go:build race

package fetch

// raceOn: the race detector is on, and sync.Pool drops some of what it
// is given on purpose, so allocation counts mean nothing.
const raceOn = true
