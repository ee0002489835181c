package main

import (
	"os"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// cliChild is the child that runs this test binary as crawltrace itself;
// the multi-process tests start it with crawltest.Command(cliChild, ...).
const cliChild = "crawltrace"

// parallelTests is how many of the package's parallel tests run at once
// unless -test.parallel says otherwise. They are the multi-process crawls,
// which spend their time waiting on child processes, politeness delays
// and the test web's latency, not on the CPU (a quarter of one core each
// on two cores): the default, GOMAXPROCS, would leave two cores mostly idle
// while they wait.
const parallelTests = 16

// childProcesses marks a test that runs crawltrace (or its test web) in
// child processes: its time is spent waiting on its children and the
// network rather than on the CPU, so -short skips it, saying what it
// runs, and it runs in parallel with the other such tests (see
// parallelTests and crawltest.Waiting).
func childProcesses(t *testing.T, what string) {
	t.Helper()
	crawltest.Waiting(t, what)
}

// TestMain runs the tests, or, in a process a test started, crawltrace.
func TestMain(m *testing.M) {
	crawltest.RunChild(map[string]func([]string) int{cliChild: run})
	crawltest.Parallel(parallelTests)
	os.Exit(m.Run())
}
