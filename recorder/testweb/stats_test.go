package testweb

import (
	"slices"
	"strings"
	"testing"
)

type linkStats struct {
	pages, links, unique, same int
	median, uniqueMedian, max  int
	tags                       map[string]int
	// shared is, per host, the fraction of its pages that link to its
	// stylesheet and home page, averaged over hosts.
	shared float64
}

func computeStats(t testing.TB, w *Web) linkStats {
	t.Helper()
	s := linkStats{tags: map[string]int{}}
	var counts, uniques []int
	hosts := w.Hosts()[:w.numGen]
	for _, hn := range hosts {
		home, css := "http://"+hn+"/", "http://"+hn+"/css/0.css"
		pages, sharing := 0, 0
		for id := range w.c.PagesPerHost {
			p, err := w.Page(hn, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != 200 {
				continue
			}
			pages++
			seen := map[string]bool{}
			for _, l := range p.Links {
				s.tags[l.Tag]++
				seen[l.URL] = true
				if strings.HasPrefix(l.URL, "http://"+hn+"/") {
					s.same++
				}
			}
			if seen[home] && seen[css] {
				sharing++
			}
			s.links += len(p.Links)
			s.unique += len(seen)
			counts = append(counts, len(p.Links))
			uniques = append(uniques, len(seen))
		}
		s.pages += pages
		s.shared += float64(sharing) / float64(pages) / float64(len(hosts))
	}
	slices.Sort(counts)
	slices.Sort(uniques)
	s.median = counts[len(counts)/2]
	s.uniqueMedian = uniques[len(uniques)/2]
	s.max = counts[len(counts)-1]
	return s
}

func checkStats(t *testing.T, s linkStats) {
	t.Helper()
	mean := float64(s.links) / float64(s.pages)
	dup := 1 - float64(s.unique)/float64(s.links)
	same := float64(s.same) / float64(s.links)
	t.Logf("pages %d links/page mean %.1f median %d max %d; unique mean %.1f median %d; duplicates %.3f same-host %.3f shared %.3f tags %v",
		s.pages, mean, s.median, s.max, float64(s.unique)/float64(s.pages), s.uniqueMedian, dup, same, s.shared, s.tags)
	within := func(name string, v, lo, hi float64) {
		if v < lo || v > hi {
			t.Errorf("%s = %.3f, want in [%.3f, %.3f]", name, v, lo, hi)
		}
	}
	within("mean links per page (paper 62.55)", mean, 50, 78)
	within("median links per page (paper 23)", float64(s.median), 19, 28)
	within("median unique links per page (paper 17)", float64(s.uniqueMedian), 13, 25)
	within("on-page duplicate fraction (paper ~0.3)", dup, 0.22, 0.40)
	within("same-host fraction (~0.8)", same, 0.72, 0.88)
	within("pages carrying the host's shared links", s.shared, 0.6, 0.97)
	within("largest page", float64(s.max), 1000, 1e6)
	within("share of <a> links", float64(s.tags["a"])/float64(s.links), 0.7, 0.92)
	for _, tag := range []string{"img", "script", "link", "iframe", "form", "area", "meta"} {
		if s.tags[tag] == 0 {
			t.Errorf("no %s links", tag)
		}
	}
}

// TestStatistics generates 2,000 pages (20 hosts of 100) and checks the
// link statistics against the paper's within tolerances.
func TestStatistics(t *testing.T) {
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost = 20, 100
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, computeStats(t, w))
}

// TestStatisticsLarge repeats the check on 50,000 pages.
func TestStatisticsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 pages")
	}
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost, c.Seed = 50, 1000, 7
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, computeStats(t, w))
}

// TestSharedProbZero checks the control for the host-locality experiment:
// without shared links, pages rarely carry the host's stylesheet and home.
func TestSharedProbZero(t *testing.T) {
	c := DefaultConfig()
	c.Hosts, c.PagesPerHost, c.SharedProb = 5, 100, 0
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if s := computeStats(t, w); s.shared > 0.2 {
		t.Fatalf("SharedProb 0: %.2f of pages still carry the shared links", s.shared)
	}
}
