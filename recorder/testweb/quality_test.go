package testweb

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestQuality(t *testing.T) {
	for _, model := range []string{"pagerank", "zipf"} {
		w := newWeb(t, func(c *Config) { c.QualityModel = model })
		q := w.Quality()
		ok := 0
		for _, hn := range w.Hosts()[:w.numGen] {
			for id := range w.c.PagesPerHost {
				u := w.PageURL(hn, id)
				code, _ := w.Status(u)
				_, in := q[u]
				if in != (code == 200) {
					t.Fatalf("%s %s: status %d, in quality map %v", model, u, code, in)
				}
				if in {
					ok++
				}
			}
		}
		sum, maxv := 0.0, 0.0
		for _, v := range q {
			if !(v > 0) {
				t.Fatalf("%s: value %v", model, v)
			}
			sum += v
			maxv = max(maxv, v)
		}
		if len(q) != ok || math.Abs(sum-1) > 1e-6 {
			t.Fatalf("%s: %d values (want %d) summing to %v", model, len(q), ok, sum)
		}
		switch model {
		case "zipf":
			// The largest value is 1/H(n), the next 1/2 of it, ...
			h := 0.0
			for i := range ok {
				h += 1 / float64(i+1)
			}
			if math.Abs(maxv-1/h) > 1e-12 {
				t.Fatalf("zipf: top value %v, want %v", maxv, 1/h)
			}
		case "pagerank":
			// Home pages, linked from every page of their host, rank far
			// above the average page.
			home := 0.0
			for _, s := range w.Seeds()[:w.numGen] {
				home += q[s] / float64(w.numGen)
			}
			if avg := 1 / float64(ok); home < 5*avg {
				t.Fatalf("pagerank: mean home page %v, mean page %v", home, avg)
			}
		}
		var buf bytes.Buffer
		if err := w.WriteQuality(&buf); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&buf)
		lines := 0
		for sc.Scan() {
			u, v, found := strings.Cut(sc.Text(), "\t")
			f, err := strconv.ParseFloat(v, 64)
			if !found || err != nil || math.Abs(f-q[u]) > 1e-5*q[u] {
				t.Fatalf("%s: bad line %q", model, sc.Text())
			}
			lines++
		}
		if lines != len(q) {
			t.Fatalf("%s: %d lines for %d values", model, lines, len(q))
		}
	}
}
