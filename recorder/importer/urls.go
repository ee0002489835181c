package importer

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// URLs imports plain URL logs: one URL per line, optionally followed by
// tab-separated columns node and dest (decimal). Lines with a node column
// are logged at that node; others at node 0. A missing dest is filled by the
// partitioner. Empty lines and lines starting with '#' are skipped; lines
// that are not http(s) URLs, or whose columns do not parse, are counted as
// bad with their line number. Gzip-compressed files are read as they are;
// "-" is standard input.
func URLs(files []string, opts Options) (*Stats, error) {
	return importAll(files, opts, func(s *Sink, _ *sources, path string, r io.Reader) error {
		return importURLs(s, path, r)
	})
}

// importURLs imports one URL list.
func importURLs(s *Sink, path string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var line int64
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		u, err := s.Normalize(strings.TrimSpace(cols[0]))
		if err != nil {
			s.BadLine(path, line, err.Error())
			continue
		}
		node, dest := 0, -1
		if len(cols) > 1 {
			if node, err = strconv.Atoi(strings.TrimSpace(cols[1])); err != nil || node < 0 || node >= s.Nodes() {
				s.BadLine(path, line, fmt.Sprintf("node column %q is not a node in 0..%d", cols[1], s.Nodes()-1))
				continue
			}
		}
		if len(cols) > 2 {
			if dest, err = strconv.Atoi(strings.TrimSpace(cols[2])); err != nil || dest < 0 || dest >= s.Nodes() {
				s.BadLine(path, line, fmt.Sprintf("dest column %q is not a node in 0..%d", cols[2], s.Nodes()-1))
				continue
			}
		}
		kind := tracefile.URLLink
		if err := s.Add(node, dest, tracefile.URLRecord{URL: u, Kind: kind}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: import: %s: line %d: %v", tracefile.ErrBadInput, path, line+1, err)
	}
	return nil
}
