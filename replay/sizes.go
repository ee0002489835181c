package replay

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// PaperSizes are the cache sizes of the paper's simulations, 2^0 .. 2^25.
func PaperSizes() []int {
	s := make([]int, 26)
	for i := range s {
		s[i] = 1 << i
	}
	return s
}

// ParseSizes parses a cache-size list: comma-separated items, each a size
// or a range. A size is a decimal number with an optional binary suffix k
// (x1024), m (x1024^2) or g (x1024^3), or a power 2^e. A range lo..hi lists
// lo, 2 lo, 4 lo, ... up to hi ("2^0..2^25" is the paper's grid, "1k..1m"
// is 1024, 2048, ..., 1048576). The result is sorted and without
// duplicates. Errors wrap [tracefile.ErrBadInput].
func ParseSizes(s string) ([]int, error) {
	var out []int
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if lo, hi, ok := strings.Cut(item, ".."); ok {
			a, err := parseSize(lo)
			if err != nil {
				return nil, err
			}
			b, err := parseSize(hi)
			if err != nil {
				return nil, err
			}
			if a > b {
				return nil, fmt.Errorf("%w: replay: size range %q runs backwards", tracefile.ErrBadInput, item)
			}
			for v := a; v <= b; v *= 2 {
				out = append(out, v)
				if v > math.MaxInt/2 {
					break
				}
			}
			continue
		}
		v, err := parseSize(item)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: replay: no cache sizes in %q", tracefile.ErrBadInput, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseSize(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	bad := func() (int, error) {
		return 0, fmt.Errorf("%w: replay: bad cache size %q (want e.g. 1024, 64k, 1m or 2^10)", tracefile.ErrBadInput, s)
	}
	if base, exp, ok := strings.Cut(s, "^"); ok {
		e, err := strconv.Atoi(exp)
		if base != "2" || err != nil || e < 0 || e > 40 {
			return bad()
		}
		return 1 << e, nil
	}
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "g"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > math.MaxInt/mult {
		return bad()
	}
	return v * mult, nil
}

// ParseTask parses a task slice "i/N" (0 <= i < N).
func ParseTask(s string) (task, tasks int, err error) {
	a, b, ok := strings.Cut(s, "/")
	task, err1 := strconv.Atoi(strings.TrimSpace(a))
	tasks, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || tasks < 1 || task < 0 || task >= tasks {
		return 0, 0, fmt.Errorf("%w: replay: bad task %q (want i/N with 0 <= i < N)", tracefile.ErrBadInput, s)
	}
	return task, tasks, nil
}
