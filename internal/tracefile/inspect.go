package tracefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Inspect writes a human-readable description of path to w: the schema,
// metadata, row counts and first rows of a raw URL segment, a page segment,
// a condensed trace or a results table (replay/results.arrow, the scenario
// tables), or a summary of every such file of a directory.
func Inspect(w io.Writer, path string, rows int) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: inspect: %v", ErrBadInput, err)
	}
	if st.IsDir() {
		return inspectDir(w, path, rows)
	}
	switch {
	case strings.HasSuffix(path, SegmentExt):
		kind := KindURLs
		if strings.HasPrefix(filepath.Base(path), PrefixPages+"-") {
			kind = KindPages
		}
		return inspectSegment(w, path, kind, rows)
	case strings.HasSuffix(path, ".arrow"):
		kind, err := arrowKind(path)
		if err != nil {
			return err
		}
		if IsTableKind(kind) {
			return inspectTable(w, path, rows)
		}
		return inspectCondensed(w, path, rows)
	}
	return fmt.Errorf("%w: %s: not a crawltrace file (want .arrows segments, .arrow condensed traces or results tables, or a directory)", ErrBadInput, path)
}

func printMeta(w io.Writer, m Meta) {
	fmt.Fprintf(w, "  kind %s, crawl %q, node %d of %d, partitioner %q, created %s, tool %s",
		m.Kind, m.CrawlID, m.Node, m.Nodes, m.Partitioner, m.Created.Format(time.RFC3339), m.ToolVersion)
	if m.Subtrace != "" {
		fmt.Fprintf(w, ", subtrace %s", m.Subtrace)
	}
	fmt.Fprintln(w)
}

func inspectSegment(w io.Writer, path, kind string, rows int) error {
	s, err := OpenSegment(path, kind)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(w, "%s: Arrow IPC stream segment\n", path)
	printMeta(w, s.Meta())
	fmt.Fprintf(w, "  schema: %s\n", schemaLine(s.Schema().String()))
	shown := 0
	for s.Next() {
		rec := s.Record()
		for i := 0; i < int(rec.NumRows()) && shown < rows; i++ {
			if kind == KindURLs {
				r := NewURLBatch(rec).Row(i)
				tag := r.Tag
				if tag == "" {
					tag = "-"
				}
				fmt.Fprintf(w, "  %8d %s %-8s %-6s src=%d w=%d dest=%d %s\n", r.Seq, time.Unix(0, r.Time).UTC().Format("15:04:05.000"),
					r.Kind, tag, r.Source, r.Worker, r.Dest, r.URL)
			} else {
				p := PageRow(rec, i)
				q := ""
				if !math.IsNaN(p.Quality) {
					q = fmt.Sprintf(" q=%.4g", p.Quality)
				}
				fmt.Fprintf(w, "  page %d %d %s %dB %s links=%d/%d%s %s%s\n", p.ID, p.Status, p.ContentType, p.Bytes,
					time.Duration(p.DurationNS).Round(time.Microsecond), p.Links, p.UniqueLinks, q, p.URL, errSuffix(p))
			}
			shown++
		}
	}
	info := s.Info()
	state := "ended cleanly"
	if !info.Clean {
		state = "CUT: " + info.Error
	}
	fmt.Fprintf(w, "  %d rows in %d batches, %d bytes, %s\n", info.Rows, info.Batches, info.Bytes, state)
	return nil
}

func errSuffix(p PageRecord) string {
	var s string
	if p.Redirect != "" {
		s += " -> " + p.Redirect
	}
	if p.Error != "" {
		s += " error: " + p.Error
	}
	return s
}

func schemaLine(s string) string {
	// Drop the metadata block Arrow appends; it is printed above.
	if i := strings.Index(s, "\n  metadata:"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "schema:")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.Join(strings.Fields(s), " ")
}

func inspectCondensed(w io.Writer, path string, rows int) error {
	r, err := OpenCondensed(path)
	if err != nil {
		return err
	}
	defer r.Close()
	fmt.Fprintf(w, "%s: condensed trace (Arrow IPC file)\n", path)
	printMeta(w, r.Meta())
	fmt.Fprintf(w, "  %d fingerprints\n", r.Len())
	shown := 0
	for r.Next() && shown < rows {
		for _, fp := range r.FPs() {
			if shown >= rows {
				break
			}
			fmt.Fprintf(w, "  %016x\n", fp)
			shown++
		}
	}
	return r.Err()
}

func inspectDir(w io.Writer, dir string, rows int) error {
	m, err := ReadManifest(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil {
		fmt.Fprintf(w, "%s: crawl %q, %d nodes, partitioner %q, created %s\n", dir, m.CrawlID, m.Nodes, m.Partitioner, m.Created.Format(time.RFC3339))
		for _, n := range m.NodeInfo {
			cut := 0
			for _, s := range n.URLSegments {
				if !s.Clean {
					cut++
				}
			}
			fmt.Fprintf(w, "  node %d: %d URL rows in %d segments (%d cut), %d page rows\n", n.Node, n.URLRows, len(n.URLSegments), cut, n.PageRows)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
		var rep struct {
			Total map[string]any `json:"total"`
		}
		if json.Unmarshal(b, &rep) == nil {
			fmt.Fprintf(w, "%s: condense report: rows %v, distinct URLs %v, distinct fingerprints %v, collision pairs %v\n", dir,
				rep.Total["rows"], rep.Total["distinct_urls"], rep.Total["distinct_fingerprints"], rep.Total["collision_pairs"])
		}
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, SegmentExt) || strings.HasSuffix(p, ".arrow")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		return fmt.Errorf("%w: %s: no crawltrace files in directory", ErrBadInput, dir)
	}
	for _, f := range files {
		if err := Inspect(w, f, rows); err != nil {
			if IsCutSchema(err) {
				fmt.Fprintf(w, "%s: CUT before its schema (no rows)\n", f)
				continue
			}
			// Keep going: one bad file should not hide the others.
			fmt.Fprintf(w, "%s: %v\n", f, err)
		}
	}
	return nil
}
