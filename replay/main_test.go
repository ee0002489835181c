package replay

import (
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// gridChildName is the child process TestGridPeakMemory starts.
const gridChildName = "grid-memory"

// TestMain runs the tests, or, in a process a test started, its child.
func TestMain(m *testing.M) {
	crawltest.Main(m, map[string]func([]string) int{gridChildName: gridChild})
}
