package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// samePages checks that two crawl directories fetched the same pages: the
// URLs of every node's page log, robots.txt fetches aside, as a set, and
// that neither fetched a page twice (.ci/slurm: a crawl launched by srun
// against a one-node crawl of the same web).
func samePages(a, b string) error {
	pa, na, err := crawlPages(a)
	if err != nil {
		return err
	}
	pb, nb, err := crawlPages(b)
	if err != nil {
		return err
	}
	var only [2][]string
	for u := range pa {
		if _, ok := pb[u]; !ok {
			only[0] = append(only[0], u)
		}
	}
	for u := range pb {
		if _, ok := pa[u]; !ok {
			only[1] = append(only[1], u)
		}
	}
	var twice []string
	for _, p := range []map[string]int{pa, pb} {
		for u, n := range p {
			if n > 1 {
				twice = append(twice, fmt.Sprintf("%s (%d times)", u, n))
			}
		}
	}
	if len(pa) == 0 {
		return fmt.Errorf("%s: no pages fetched", a)
	}
	if len(only[0])+len(only[1])+len(twice) > 0 {
		for i := range only {
			slices.Sort(only[i])
		}
		slices.Sort(twice)
		return fmt.Errorf("%s (%d nodes, %d pages) and %s (%d nodes, %d pages) differ: %d pages only in the first %s, %d only in the second %s, %d fetched twice %s",
			a, na, len(pa), b, nb, len(pb), len(only[0]), firstFew(only[0]), len(only[1]), firstFew(only[1]), len(twice), firstFew(twice))
	}
	fmt.Printf("same pages: %s (%d nodes) and %s (%d nodes): %d pages, each fetched once\n", a, na, b, nb, len(pa))
	return nil
}

func firstFew(s []string) string {
	if len(s) > 5 {
		s = append(s[:5:5], "...")
	}
	return "[" + strings.Join(s, " ") + "]"
}

// crawlPages counts the fetches of each page URL (robots.txt aside) over
// every node of a crawl directory. A 429 or 503 answer, which the crawler
// tries again after the server's Retry-After (docs/politeness.md), is
// not counted as a fetch, but the URL is listed.
func crawlPages(dir string) (map[string]int, int, error) {
	nodes, err := filepath.Glob(filepath.Join(dir, "node-[0-9]*"))
	if err != nil || len(nodes) == 0 {
		return nil, 0, fmt.Errorf("%s: no node directories (not a crawl directory)", dir)
	}
	pages := map[string]int{}
	for _, nd := range nodes {
		paths, err := tracefile.ListSegments(nd, tracefile.PrefixPages)
		if err != nil {
			return nil, 0, err
		}
		for _, p := range paths {
			s, err := tracefile.OpenSegment(p, tracefile.KindPages)
			if err != nil {
				return nil, 0, err
			}
			for s.Next() {
				rec := s.Record()
				for i := 0; i < int(rec.NumRows()); i++ {
					r := tracefile.PageRow(rec, i)
					if strings.HasSuffix(r.URL, "/robots.txt") {
						continue
					}
					if r.Status == 429 || r.Status == 503 {
						pages[r.URL] += 0
					} else {
						pages[r.URL]++
					}
				}
			}
			info := s.Info()
			s.Close()
			if !info.Clean {
				// Both crawls compared ended cleanly: a cut log would
				// hide pages.
				return nil, 0, fmt.Errorf("%s: cut (%s)", p, info.Error)
			}
		}
	}
	return pages, len(nodes), nil
}
