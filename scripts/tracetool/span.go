package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// spanMain prints, for each node of a crawl directory, where its time
// went: from its start event (or first fetch) to its first and last
// fetch, and to its stop event; the crawl's end is the last stop. It is
// how scripts/bench-crawl-tcp.sh shows how long the nodes took to stop
// after their work was done.
//
//	tracetool span DIR
func spanMain(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: tracetool span DIR")
	}
	dir := args[0]
	nodes, err := filepath.Glob(filepath.Join(dir, "node-*"))
	if err != nil || len(nodes) == 0 {
		return fmt.Errorf("%s: no node directories", dir)
	}
	sort.Strings(nodes)
	var t0, lastFetch, lastStop time.Time
	type row struct {
		name                     string
		start, first, last, stop time.Time
		pages                    int
	}
	var rows []row
	for _, nd := range nodes {
		r := row{name: filepath.Base(nd)}
		paths, err := tracefile.ListSegments(nd, tracefile.PrefixPages)
		if err != nil {
			return err
		}
		for _, p := range paths {
			s, err := tracefile.OpenSegment(p, tracefile.KindPages)
			if err != nil {
				return err
			}
			for s.Next() {
				rec := s.Record()
				for i := 0; i < int(rec.NumRows()); i++ {
					at := time.Unix(0, tracefile.PageRow(rec, i).Time)
					if r.first.IsZero() || at.Before(r.first) {
						r.first = at
					}
					if at.After(r.last) {
						r.last = at
					}
					r.pages++
				}
			}
			s.Close()
		}
		if f, err := os.Open(filepath.Join(nd, "events.jsonl")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var e struct {
					Time  time.Time `json:"time"`
					Event string    `json:"event"`
				}
				if json.Unmarshal(sc.Bytes(), &e) != nil {
					continue
				}
				switch e.Event {
				case "start":
					if r.start.IsZero() {
						r.start = e.Time
					}
				case "stop":
					r.stop = e.Time
				}
			}
			f.Close()
		}
		if r.start.IsZero() {
			r.start = r.first
		}
		if t0.IsZero() || (!r.start.IsZero() && r.start.Before(t0)) {
			t0 = r.start
		}
		if r.last.After(lastFetch) {
			lastFetch = r.last
		}
		if r.stop.After(lastStop) {
			lastStop = r.stop
		}
		rows = append(rows, r)
	}
	since := func(x time.Time) string {
		if x.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%.2f", x.Sub(t0).Seconds())
	}
	fmt.Printf("%-10s %8s %8s %8s %8s %8s\n", "node", "pages", "start", "first", "last", "stop")
	for _, r := range rows {
		fmt.Printf("%-10s %8d %8s %8s %8s %8s\n", r.name, r.pages, since(r.start), since(r.first), since(r.last), since(r.stop))
	}
	if !lastStop.IsZero() {
		fmt.Printf("last fetch %.2f s, last stop %.2f s: %.2f s from the last fetch to the last stop\n",
			lastFetch.Sub(t0).Seconds(), lastStop.Sub(t0).Seconds(), lastStop.Sub(lastFetch).Seconds())
	}
	return nil
}
