//go:build long

package main

// longTier: built with -tags long, the fault trials marked by longOnly run.
const longTier = true
