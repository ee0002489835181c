//go:build !long

package main

// longTier is false in a plain `go test`: the tests marked by longOnly
// skip. `go test -tags long` (which .ci/run runs) runs them.
const longTier = false
