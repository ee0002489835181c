package orders_test

import (
	"os"
	"time"

	"github.com/crawltrace/crawltrace/cmd/crawltrace/internal/orders"
	"github.com/crawltrace/crawltrace/recorder/quality"
)

// A crawl of three pages, the second holding most of the quality: half the
// pages after 2s, 80% of the quality after 2s as well.
func ExampleWriteCSV() {
	fetches := []quality.Fetch{
		{End: 1 * time.Second, Quality: 0.1},
		{End: 2 * time.Second, Quality: 0.8},
		{End: 3 * time.Second, Quality: 0.1},
	}
	r := orders.Result{Order: "capability", Pages: 3, PeakConns: 1, URLs: 40,
		Timeline: quality.SummarizeProgress(fetches, 3*time.Second, true, 1)}
	orders.WriteCSV(os.Stdout, []orders.Result{r})
	// Output:
	// order,seconds,pages,pages_per_second,peak_conns,urls_logged,time_to_50pct_pages,time_to_80pct_pages,pages_at_half_time,time_to_50pct_quality,time_to_80pct_quality,quality_at_third_time,quality_fetched,lru_miss_16,lru_miss_256,lru_miss_4096,lru_miss_65536,lru_miss_1048576
	// capability,3,3,1,1,40,2,3,0.333333,2,2,0.1,1,,,,,
}
