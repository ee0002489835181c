package importer

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// URLs imports plain URL logs: one URL per line, optionally followed by
// tab-separated columns node and dest (decimal). Lines with a node column
// are logged at that node; others at node 0. A missing dest is filled by the
// partitioner. Empty lines and lines starting with '#' are skipped; lines
// that are not http(s) URLs, or whose columns do not parse, are counted as
// bad with their line number.
func URLs(files []string, opts Options) (*Stats, error) {
	s, err := NewSink(opts)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := importURLFile(s, f); err != nil {
			s.Abort()
			return nil, err
		}
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if s.Stats.Rows == 0 {
		os.RemoveAll(opts.Out)
		return &s.Stats, fmt.Errorf("%w: import: no URLs in %s (%d bad lines)", tracefile.ErrBadInput, strings.Join(files, ", "), s.Stats.BadLines)
	}
	return &s.Stats, nil
}

func importURLFile(s *Sink, path string) error {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: import: %v", tracefile.ErrBadInput, err)
		}
		defer f.Close()
		r = f
	}
	s.Stats.Files = append(s.Stats.Files, path)
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
