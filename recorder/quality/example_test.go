package quality_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/recorder/quality"
)

// A crawl of four pages in four seconds, measured against an oracle of
// four pages. It fetched the best page first, then a worse one before a
// better one, and last a page the oracle does not list (quality 0), so it
// never gathered the whole of the oracle's quality.
func ExampleSummarizeProgress() {
	oracle, err := quality.ParseOracle(strings.NewReader(
		"# url<TAB>quality\n"+
			"http://a.test/\t0.5\n"+
			"http://a.test/b\t0.25\n"+
			"http://A.test/c\t0.125\n"+
			"http://a.test/d\t0.125\n"), "oracle.tsv")
	if err != nil {
		fmt.Println(err)
		return
	}
	var fetches []quality.Fetch
	for i, u := range []string{"http://a.test/", "http://a.test/c", "http://a.test/b", "http://a.test/e"} {
		fetches = append(fetches, quality.Fetch{End: time.Duration(i+1) * time.Second, Quality: oracle[u]})
	}
	p := quality.SummarizeProgress(fetches, 4*time.Second, true, quality.Total(oracle))
	fmt.Printf("%d pages, quality %g of %g\n", p.Pages, p.Quality, p.OracleQuality)
	for i := range p.TimeToPages {
		fmt.Printf("%3.0f%%: pages after %gs, quality after %gs\n",
			100*p.TimeToPages[i].Fraction, p.TimeToPages[i].Seconds, p.TimeToQuality[i].Seconds)
	}
	for _, a := range p.At {
		if a.TimeFraction == 0.5 {
			fmt.Printf("at half time (%gs): %d pages (%g), %g of the quality\n", a.Seconds, a.Pages, a.PageFraction, a.QualityFraction)
		}
	}
	// Output:
	// 4 pages, quality 0.875 of 1
	//  25%: pages after 1s, quality after 1s
	//  50%: pages after 2s, quality after 1s
	//  80%: pages after 4s, quality after 3s
	// 100%: pages after 4s, quality after -1s
	// at half time (2s): 2 pages (0.5), 0.625 of the quality
}
