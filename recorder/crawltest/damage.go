package crawltest

import (
	"bytes"
	"os"
	"testing"
)

// FlipURL changes the host of the first "http://" URL string in the file
// at path by one bit: the file keeps its size and still reads, so only a
// checksum can tell.
func FlipURL(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("http://"))
	if i < 0 {
		t.Fatalf("%s: no URL in it", path)
	}
	b[i+len("http://")] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
