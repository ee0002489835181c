package fliptest

import (
	"os"
	"path/filepath"
	"testing"
)

// First and Last flip one bit of the byte named and nothing else, and
// restore puts the file back.
func TestFirstLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	const good = "a http://x.test/ b http://y.test/ c"
	for _, tc := range []struct {
		name string
		flip func(t testing.TB, path, what string, off int) func()
		what string
		off  int
		want string
	}{
		{"first host byte", First, "http://", 7, "a http://y.test/ b http://y.test/ c"},
		{"last host byte", Last, "http://", 7, "a http://x.test/ b http://x.test/ c"},
		{"first byte of what", First, "b ", 0, "a http://x.test/ c http://y.test/ c"},
		{"last byte of the file", Last, "c", 0, "a http://x.test/ b http://y.test/ b"},
	} {
		if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
		restore := tc.flip(t, path, tc.what, tc.off)
		if b, _ := os.ReadFile(path); string(b) != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, b, tc.want)
		}
		restore()
		if b, _ := os.ReadFile(path); string(b) != good {
			t.Errorf("%s: restored %q, want %q", tc.name, b, good)
		}
	}
}
