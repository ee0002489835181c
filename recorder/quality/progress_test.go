package quality

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"
)

// TestSummarizeProgress checks the progress summary against values worked
// out by hand: 4 fetches, given out of order, ending at 1, 2, 3 and 4
// seconds with 10%, 40%, an unknown (NaN, counted 0) and 50% of an
// oracle's total of 1, in a crawl of 8 seconds.
func TestSummarizeProgress(t *testing.T) {
	s := time.Second
	fs := []Fetch{{4 * s, 0.5}, {2 * s, 0.4}, {1 * s, 0.1}, {3 * s, math.NaN()}}
	curve := ProgressCurve(fs, true)
	want := []CurvePoint{{1 * s, 1, 0.1}, {2 * s, 2, 0.5}, {3 * s, 3, 0.5}, {4 * s, 4, 1}}
	for i := range want {
		if c := curve[i]; c.End != want[i].End || c.Pages != want[i].Pages || math.Abs(c.Quality-want[i].Quality) > 1e-12 {
			t.Errorf("curve[%d] = %+v, want %+v", i, c, want[i])
		}
	}
	p := SummarizeProgress(fs, 8*s, true, 1)
	if p.Pages != 4 || math.Abs(p.Quality-1) > 1e-12 || p.OracleQuality != 1 {
		t.Errorf("totals %+v", p)
	}
	// At 0.1 (0.8s) nothing; at 0.2 (1.6s) one page; at 0.4 (3.2s) three;
	// at 0.5 (4s) all four.
	for _, c := range []struct {
		f       float64
		pages   int64
		quality float64
	}{{0.1, 0, 0}, {0.2, 1, 0.1}, {0.4, 3, 0.5}, {0.5, 4, 1}, {1, 4, 1}} {
		var got *ProgressPoint
		for i := range p.At {
			if p.At[i].TimeFraction == c.f {
				got = &p.At[i]
			}
		}
		if got == nil || got.Pages != c.pages || math.Abs(got.QualityFraction-c.quality) > 1e-12 ||
			math.Abs(got.PageFraction-float64(c.pages)/4) > 1e-12 {
			t.Errorf("at %g: %+v, want %d pages, %g quality", c.f, got, c.pages, c.quality)
		}
	}
	// Pages: 25% after 1s, 50% after 2s, 80% (4th page) after 4s. Quality:
	// 25% and 50% reached at 2s, 80% and 100% at 4s.
	wantPages := []Milestone{{0.25, 1}, {0.5, 2}, {0.8, 4}, {1, 4}}
	wantQuality := []Milestone{{0.25, 2}, {0.5, 2}, {0.8, 4}, {1, 4}}
	for i := range wantPages {
		if p.TimeToPages[i] != wantPages[i] || p.TimeToQuality[i] != wantQuality[i] {
			t.Errorf("milestone %d: pages %+v quality %+v, want %+v %+v",
				i, p.TimeToPages[i], p.TimeToQuality[i], wantPages[i], wantQuality[i])
		}
	}
	// Without an oracle: no quality at all, no quality milestones.
	if p := SummarizeProgress(fs, 8*s, false, 0); p.Quality != 0 || len(p.TimeToQuality) != 0 || p.TimeToPages[1].Seconds != 2 {
		t.Errorf("without an oracle: %+v", p)
	}
	// No fetches: every milestone is -1.
	if p := SummarizeProgress(nil, s, true, 1); p.Pages != 0 || p.TimeToPages[0].Seconds != -1 || p.TimeToQuality[0].Seconds != -1 {
		t.Errorf("no fetches: %+v", p)
	}
}

// TestProgressJSON pins the JSON of [Progress], the "progress" object of
// a crawl's stats.json, field by field against a hand-written encoding:
// its names and order are a file format read by notebooks and drivers.
func TestProgressJSON(t *testing.T) {
	p := Progress{Pages: 2, Quality: 0.5, OracleQuality: 1,
		At:          []ProgressPoint{{TimeFraction: 1, Seconds: 3, Pages: 2, PageFraction: 1, Quality: 0.5, QualityFraction: 0.5}},
		TimeToPages: []Milestone{{Fraction: 0.5, Seconds: 1.5}}}
	const at = `"at":[{"time_fraction":1,"seconds":3,"pages":2,"page_fraction":1,"quality":0.5,"quality_fraction":0.5}]`
	for _, c := range []struct {
		name string
		q    []Milestone
		want string
	}{
		{"without an oracle", nil,
			`{"pages":2,"quality":0.5,"oracle_quality":1,` + at + `,"time_to_pages":[{"fraction":0.5,"seconds":1.5}]}`},
		{"with an oracle", []Milestone{{Fraction: 0.5, Seconds: -1}},
			`{"pages":2,"quality":0.5,"oracle_quality":1,` + at + `,"time_to_pages":[{"fraction":0.5,"seconds":1.5}],"time_to_quality":[{"fraction":0.5,"seconds":-1}]}`},
	} {
		p.TimeToQuality = c.q
		got, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// Total adds in URL order: the same oracle gives the same bits every time,
// which a sum in map order does not (these values differ in the last
// bits when added in different orders).
func TestTotalDeterministic(t *testing.T) {
	m := map[string]float64{}
	for i := range 200 {
		m[fmt.Sprintf("http://h.test/%d", i)] = 1.0/float64(i+3) + 1e-9*float64(i%7)
	}
	want := Total(m)
	for range 50 {
		if got := Total(m); got != want {
			t.Fatalf("Total gave %v, then %v", want, got)
		}
	}
}
