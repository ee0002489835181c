package quality

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func TestParseOracle(t *testing.T) {
	m, err := ParseOracle(strings.NewReader("# oracle\nhttp://A.test/p/1.html\t0.25\n\nhttp://a.test/\t1e-3\r\n"), "q.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["http://a.test/p/1.html"] != 0.25 || m["http://a.test/"] != 0.001 {
		t.Errorf("oracle %v", m)
	}
	for _, bad := range []string{"http://a.test/ 0.5\n", "http://a.test/\t-1\n", "http://a.test/\tNaN\n",
		"http://a.test/\t1\nhttp://A.TEST/\t2\n", "::\t1\n"} {
		if _, err := ParseOracle(strings.NewReader(bad), "q.tsv"); !errors.Is(err, tracefile.ErrBadInput) || !strings.Contains(err.Error(), "q.tsv line") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
	if _, err := ReadOracle(filepath.Join(t.TempDir(), "missing.tsv")); !errors.Is(err, tracefile.ErrBadInput) {
		t.Errorf("missing file: %v", err)
	}
}
