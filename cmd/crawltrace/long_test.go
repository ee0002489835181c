package main

import "testing"

// longOnly skips the test outside -tags long (see tier_test.go). It marks
// the fault tests that crawl the local web in several child processes
// for 20 s or more each (nodes killed with -9 and resumed, declared dead,
// locked out) and the real-site crawl that waits out a 30 s robots.txt
// retry: together they are most of the suite's CPU. Each stays a plain
// test otherwise, and `.ci/run` runs every one of them with -tags long.
// A test calls longOnly on the line after its func line: .ci/run finds
// the tests to run that way.
func longOnly(t *testing.T) {
	t.Helper()
	if !longTier {
		t.Skip("a long fault test: go test -tags long runs it (.ci/run does)")
	}
}
