package quality

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// ReadOracle reads a page-quality oracle file for the recorder's
// Config.Quality: one "url<TAB>value" line per page (the format of
// testweb's Web.WriteQuality), blank lines and lines starting with #
// skipped. URLs are normalized as the
// crawler normalizes links, so they match the URLs it queues. A malformed
// line, a value that is not a finite non-negative number or a URL listed
// twice is an error wrapping tracefile.ErrBadInput that names the file
// and the line, as is a file that cannot be opened.
func ReadOracle(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		// The user named a file that cannot be opened: bad input.
		return nil, fmt.Errorf("%w: recorder: quality oracle: %v", tracefile.ErrBadInput, err)
	}
	defer f.Close()
	m, err := ParseOracle(f, path)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ParseOracle is [ReadOracle] on a reader; name labels errors.
func ParseOracle(r io.Reader, name string) (map[string]float64, error) {
	m := make(map[string]float64)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: recorder: quality oracle %s line %d: %s", tracefile.ErrBadInput, name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		u, v, ok := strings.Cut(text, "\t")
		if !ok {
			return nil, bad("want url<TAB>value")
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || q < 0 || math.IsInf(q, 0) || math.IsNaN(q) {
			return nil, bad("value %q is not a finite non-negative number", v)
		}
		n, err := urlnorm.Normalize(strings.TrimSpace(u))
		if err != nil {
			return nil, bad("url %q: %v", u, err)
		}
		if _, dup := m[n]; dup {
			return nil, bad("url %q listed twice", n)
		}
		m[n] = q
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("recorder: quality oracle %s: %w", name, err)
	}
	return m, nil
}
