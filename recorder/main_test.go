package recorder

import (
	"os"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// killChildName is the child process TestKill9 starts: a crawl into the
// directory args[0] that runs until it is killed.
const killChildName = "kill"

// TestMain runs the tests, or, in a process a test started, its child.
// Up to 8 parallel tests run at once: they are whole crawls of test
// servers, waiting on the servers' latency, politeness delays and
// Retry-After, more than on the CPU (crawltest.Parallel).
func TestMain(m *testing.M) {
	crawltest.RunChild(map[string]func([]string) int{
		killChildName: func(args []string) int { killChild(args[0]); return 4 },
	})
	crawltest.Parallel(8)
	os.Exit(m.Run())
}
