package progress_test

import (
	"os"
	"time"

	"github.com/crawltrace/crawltrace/internal/progress"
)

// A batch job's log gets a plain line every 10 s of the (here injected)
// clock.
func Example() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	r := progress.New(&progress.Sink{W: os.Stdout, Now: clock}, "crawl", "pages", 1000)
	for pages := int64(50); pages <= 250; pages += 50 {
		now = now.Add(5 * time.Second)
		r.Update(pages, "queued 12")
	}
	r.Finish()
	// Output:
	// crawl: 10s 100/1000 pages (10.0%), 10 pages/s, ETA 1m30s; queued 12
	// crawl: 20s 200/1000 pages (20.0%), 10 pages/s, ETA 1m20s; queued 12
}
