package testweb

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
)

// Quality returns the quality oracle of Cao, Jiang and Singh's
// quality-first scheduling: a value for every generated page that answers
// 200 (keyed by its URL, no query), summing to 1. With QualityModel
// "pagerank" it is PageRank (damping 0.85, power iteration) over the link
// graph of those pages, links through a redirect counted for its target and
// duplicate links as parallel edges; with "zipf" it is 1/rank for a seeded
// random ranking of the pages. Computed once, on first use, in time and
// memory proportional to the number of links; the map is shared and must not
// be modified.
func (w *Web) Quality() map[string]float64 {
	w.qOnce.Do(func() {
		if w.c.QualityModel == "zipf" {
			w.quality = w.zipfQuality()
		} else {
			w.quality = w.pageRank()
		}
	})
	return w.quality
}

// WriteQuality writes "url<TAB>value" lines, sorted by URL.
func (w *Web) WriteQuality(out io.Writer) error {
	q := w.Quality()
	urls := make([]string, 0, len(q))
	for u := range q {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	bw := bufio.NewWriter(out)
	for _, u := range urls {
		fmt.Fprintf(bw, "%s\t%.6g\n", u, q[u])
	}
	return bw.Flush()
}

// WriteSeeds writes the seed URLs, one per line.
func (w *Web) WriteSeeds(out io.Writer) error { return writeLines(out, w.Seeds()) }

// writeLines writes lines to out, each ended by a newline.
func writeLines(out io.Writer, lines []string) error {
	bw := bufio.NewWriter(out)
	for _, s := range lines {
		bw.WriteString(s)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// okPages returns the node index (host*pages+id) of every generated page
// that answers 200.
func (w *Web) okPages() []int64 {
	m := int64(w.c.PagesPerHost)
	var nodes []int64
	for h := range int64(w.numGen) {
		for id := range m {
			if w.pageStatus(int32(h), id) == 200 {
				nodes = append(nodes, h*m+id)
			}
		}
	}
	return nodes
}

func (w *Web) nodeURL(n int64) string {
	m := int64(w.c.PagesPerHost)
	return w.urlOf(target{host: int32(n / m), kind: kPage, id: n % m})
}

func (w *Web) zipfQuality() map[string]float64 {
	nodes := w.okPages()
	r := rng{hash(uint64(w.c.Seed), saltQuality, 0, 0)}
	for i := len(nodes) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		nodes[i], nodes[j] = nodes[j], nodes[i]
	}
	sum := 0.0
	for i := range nodes {
		sum += 1 / float64(i+1)
	}
	q := make(map[string]float64, len(nodes))
	for i, n := range nodes {
		q[w.nodeURL(n)] = 1 / float64(i+1) / sum
	}
	return q
}

func (w *Web) pageRank() map[string]float64 {
	nodes := w.okPages()
	m := int64(w.c.PagesPerHost)
	index := make(map[int64]int32, len(nodes))
	for i, n := range nodes {
		index[n] = int32(i)
	}
	// Edges in compressed sparse rows: out[start[i]:start[i+1]].
	start := make([]int64, 1, len(nodes)+1)
	var out []int32
	var elems []elem
	for _, n := range nodes {
		pg := w.genPage(target{host: int32(n / m), kind: kPage, id: n % m}, elems)
		for _, e := range pg.elems {
			t := e.t
			if e.form == fSelf {
				t = pg.self
			}
			if t.kind != kPage || int(t.host) >= w.numGen {
				continue
			}
			if c := w.pageStatus(t.host, t.id); c == 301 || c == 302 {
				t, _ = w.redirect(t.host, t.id)
			}
			if j, ok := index[int64(t.host)*m+t.id]; ok {
				out = append(out, j)
			}
		}
		start = append(start, int64(len(out)))
		elems = pg.elems
	}
	const d = 0.85
	k := len(nodes)
	if k == 0 {
		return map[string]float64{}
	}
	pr := make([]float64, k)
	next := make([]float64, k)
	for i := range pr {
		pr[i] = 1 / float64(k)
	}
	for iter := 0; iter < 100; iter++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i := range k {
			deg := start[i+1] - start[i]
			if deg == 0 {
				dangling += pr[i]
				continue
			}
			share := pr[i] / float64(deg)
			for _, j := range out[start[i]:start[i+1]] {
				next[j] += share
			}
		}
		base := (1-d)/float64(k) + d*dangling/float64(k)
		diff := 0.0
		for i := range next {
			next[i] = base + d*next[i]
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < 1e-10 {
			break
		}
	}
	q := make(map[string]float64, k)
	for i, n := range nodes {
		q[w.nodeURL(n)] = pr[i]
	}
	return q
}
