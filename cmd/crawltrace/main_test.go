package main

import (
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// cliChild is the child that runs this test binary as crawltrace itself;
// the multi-process tests start it with crawltest.Command(cliChild, ...).
const cliChild = "crawltrace"

// TestMain runs the tests, or, in a process a test started, crawltrace.
func TestMain(m *testing.M) {
	crawltest.Main(m, map[string]func([]string) int{cliChild: run})
}
