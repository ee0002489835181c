package recorder

import (
	"math"
	"slices"
	"time"
)

// fetchPoint is one page fetch (robots.txt excluded): when it ended,
// measured from the start of the workers, and its quality (NaN without an
// oracle).
type fetchPoint struct {
	at time.Duration
	q  float64
}

// Progress says how fast a crawl gathered pages and quality, the measures
// of Cao, Jiang and Singh's Figures 6 and 7. Pages are fetch attempts
// (robots.txt excluded); their fraction is of the pages this crawl
// fetched. Quality is the summed oracle quality of the fetched pages;
// its fraction is of the oracle's total when there is one. It is a plain
// value, not safe for concurrent mutation.
type Progress struct {
	Pages int64 `json:"pages"`
	// Quality and OracleQuality are 0 without an oracle.
	Quality       float64 `json:"quality"`
	OracleQuality float64 `json:"oracle_quality"`
	// At samples the crawl at fractions of its duration (0.1, 0.2, 1/3,
	// 0.4, ..., 1).
	At []ProgressPoint `json:"at"`
	// TimeToPages and TimeToQuality give the seconds until a fraction
	// (0.25, 0.5, 0.8, 1) of the pages or of the oracle's quality was
	// fetched; -1 when it never was. TimeToQuality is empty without an
	// oracle.
	TimeToPages   []Milestone `json:"time_to_pages"`
	TimeToQuality []Milestone `json:"time_to_quality,omitempty"`
}

// ProgressPoint is what a crawl had fetched after TimeFraction of its
// duration (Seconds).
type ProgressPoint struct {
	TimeFraction    float64 `json:"time_fraction"`
	Seconds         float64 `json:"seconds"`
	Pages           int64   `json:"pages"`
	PageFraction    float64 `json:"page_fraction"`
	Quality         float64 `json:"quality"`
	QualityFraction float64 `json:"quality_fraction"`
}

// Milestone is the time (seconds) at which a fraction was reached.
type Milestone struct {
	Fraction float64 `json:"fraction"`
	Seconds  float64 `json:"seconds"`
}

var (
	progressTimeFractions = []float64{0.1, 0.2, 1.0 / 3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	progressMilestones    = []float64{0.25, 0.5, 0.8, 1}
)

// oracleTotal sums an oracle's values.
func oracleTotal(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

// summarizeProgress builds [Progress] from the fetches of a crawl that
// lasted total; oracle reports whether qualities are known and sum is
// the oracle's total.
func summarizeProgress(points []fetchPoint, total time.Duration, oracle bool, sum float64) *Progress {
	pts := slices.Clone(points)
	slices.SortFunc(pts, func(a, b fetchPoint) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	p := &Progress{Pages: int64(len(pts))}
	if oracle {
		p.OracleQuality = sum
	}
	cum := make([]float64, len(pts)) // quality fetched by the end of fetch i
	var q float64
	for i, x := range pts {
		if oracle && !math.IsNaN(x.q) {
			q += x.q
		}
		cum[i] = q
	}
	p.Quality = q
	qDenom := sum
	if qDenom <= 0 {
		qDenom = q
	}
	for _, f := range progressTimeFractions {
		at := time.Duration(f * float64(total))
		k, _ := slices.BinarySearchFunc(pts, at, func(x fetchPoint, t time.Duration) int {
			if x.at <= t {
				return -1
			}
			return 1
		})
		pt := ProgressPoint{TimeFraction: f, Seconds: at.Seconds(), Pages: int64(k)}
		if len(pts) > 0 {
			pt.PageFraction = float64(k) / float64(len(pts))
		}
		if k > 0 {
			pt.Quality = cum[k-1]
		}
		if qDenom > 0 {
			pt.QualityFraction = pt.Quality / qDenom
		}
		p.At = append(p.At, pt)
	}
	for _, f := range progressMilestones {
		m := Milestone{Fraction: f, Seconds: -1}
		if need := int(math.Ceil(f * float64(len(pts)))); len(pts) > 0 {
			m.Seconds = pts[max(need, 1)-1].at.Seconds()
		}
		p.TimeToPages = append(p.TimeToPages, m)
		if oracle {
			m := Milestone{Fraction: f, Seconds: -1}
			for i := range pts {
				// A small tolerance absorbs rounding in the running sum.
				if qDenom > 0 && cum[i] >= f*qDenom*(1-1e-9) {
					m.Seconds = pts[i].at.Seconds()
					break
				}
			}
			p.TimeToQuality = append(p.TimeToQuality, m)
		}
	}
	return p
}
