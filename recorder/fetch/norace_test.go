//go:build !race

package fetch

const raceOn = false
