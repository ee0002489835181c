package recorder

import (
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// killChildName is the child process TestKill9 starts: a crawl into the
// directory args[0] that runs until it is killed.
const killChildName = "kill"

// TestMain runs the tests, or, in a process a test started, its child.
func TestMain(m *testing.M) {
	crawltest.Main(m, map[string]func([]string) int{
		killChildName: func(args []string) int { killChild(args[0]); return 4 },
	})
}
