package crawltest

import (
	"testing"

	"github.com/crawltrace/crawltrace/internal/fliptest"
)

// FlipURL changes the host of the first "http://" URL string in the file
// at path by one bit: the file keeps its size and still reads, so only a
// checksum can tell.
func FlipURL(t testing.TB, path string) {
	t.Helper()
	fliptest.First(t, path, "http://", len("http://"))
}
