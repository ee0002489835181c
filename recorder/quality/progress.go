package quality

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

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

// Total is the summed quality of an oracle's pages (0 for a nil oracle):
// the sum argument of [SummarizeProgress].
//
// The values are added in the order of their URLs, so the total is the same
// float64 in every run (a map's order would change its last bits).
func Total(m map[string]float64) float64 {
	var s float64
	for _, u := range slices.Sorted(maps.Keys(m)) {
		s += m[u]
	}
	return s
}

// Fetch is one page fetch (robots.txt excluded) as [SummarizeProgress]
// and [ProgressCurve] read it: when it ended, measured from the crawl's
// start, and its quality (NaN when unknown).
type Fetch struct {
	End     time.Duration
	Quality float64
}

// CurvePoint is a crawl just after one of its fetches ended: when (End),
// the pages fetched by then and their summed quality.
type CurvePoint struct {
	End     time.Duration
	Pages   int64
	Quality float64
}

// ProgressCurve puts fetches, given in any order, in the order they ended
// and sums pages and quality along them: point i is the crawl after its
// (i+1)th fetch. Unknown qualities (NaN), and every quality when oracle
// is false, count as 0. It is the curve [SummarizeProgress] samples and
// the one the crawl-order plots draw.
func ProgressCurve(fetches []Fetch, oracle bool) []CurvePoint {
	pts := slices.Clone(fetches)
	slices.SortStableFunc(pts, func(a, b Fetch) int { return cmp.Compare(a.End, b.End) })
	curve := make([]CurvePoint, len(pts))
	var q float64
	for i, x := range pts {
		if oracle && !math.IsNaN(x.Quality) {
			q += x.Quality
		}
		curve[i] = CurvePoint{End: x.End, Pages: int64(i + 1), Quality: q}
	}
	return curve
}

// SummarizeProgress builds [Progress] from the fetches of a crawl that
// lasted total; oracle reports whether qualities are known and sum is
// the oracle's total. The recorder builds stats.json's progress with it;
// a driver that reads fetches back from a page log can measure the same
// way.
func SummarizeProgress(fetches []Fetch, total time.Duration, oracle bool, sum float64) *Progress {
	curve := ProgressCurve(fetches, oracle)
	p := &Progress{Pages: int64(len(curve))}
	if oracle {
		p.OracleQuality = sum
	}
	var q float64 // quality fetched by the end of the crawl
	if len(curve) > 0 {
		q = curve[len(curve)-1].Quality
	}
	p.Quality = q
	qDenom := sum
	if qDenom <= 0 {
		qDenom = q
	}
	for _, f := range progressTimeFractions {
		at := time.Duration(f * float64(total))
		k, _ := slices.BinarySearchFunc(curve, at, func(x CurvePoint, t time.Duration) int {
			if x.End <= t {
				return -1
			}
			return 1
		})
		pt := ProgressPoint{TimeFraction: f, Seconds: at.Seconds(), Pages: int64(k)}
		if len(curve) > 0 {
			pt.PageFraction = float64(k) / float64(len(curve))
		}
		if k > 0 {
			pt.Quality = curve[k-1].Quality
		}
		if qDenom > 0 {
			pt.QualityFraction = pt.Quality / qDenom
		}
		p.At = append(p.At, pt)
	}
	for _, f := range progressMilestones {
		m := Milestone{Fraction: f, Seconds: -1}
		if need := int(math.Ceil(f * float64(len(curve)))); len(curve) > 0 {
			m.Seconds = curve[max(need, 1)-1].End.Seconds()
		}
		p.TimeToPages = append(p.TimeToPages, m)
		if oracle {
			m := Milestone{Fraction: f, Seconds: -1}
			for _, c := range curve {
				// A small tolerance absorbs rounding in the running sum.
				if qDenom > 0 && c.Quality >= f*qDenom*(1-1e-9) {
					m.Seconds = c.End.Seconds()
					break
				}
			}
			p.TimeToQuality = append(p.TimeToQuality, m)
		}
	}
	return p
}
