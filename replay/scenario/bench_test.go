package scenario

import (
	"testing"
)

// benchCrawl is a 4-node crawl of 100,000 URLs over 2,000 hosts.
func benchCrawl(b *testing.B) string {
	c := randomCrawl(b, 4, 100000, 2000, 1)
	c.flushRows = 8192
	return c.write(b)
}

// benchURLs times run over the benchmark crawl and reports as URLs per
// second the URL count it returns.
func benchURLs(b *testing.B, run func(dir string) (int64, error)) {
	dir := benchCrawl(b)
	var urls int64
	for b.Loop() {
		n, err := run(dir)
		if err != nil {
			b.Fatal(err)
		}
		urls = n
	}
	b.ReportMetric(float64(urls)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

func BenchmarkPartition(b *testing.B) {
	cfg := DefaultPartitionConfig()
	cfg.Plots = false
	benchURLs(b, func(dir string) (int64, error) {
		cfg.Input = dir
		res, err := Partition(cfg)
		if err != nil {
			return 0, err
		}
		return res.Rows[0].URLs, nil
	})
	b.ReportMetric(float64(len(cfg.Nodes)*len(cfg.Partitioners)), "configs")
}

func BenchmarkNodeLoss(b *testing.B) {
	cfg := DefaultNodeLossConfig()
	benchURLs(b, func(dir string) (int64, error) {
		cfg.Input = dir
		res, err := NodeLoss(cfg)
		if err != nil {
			return 0, err
		}
		return res.Rows[0].URLs, nil
	})
}

func BenchmarkLocality(b *testing.B) {
	cfg := DefaultLocalityConfig()
	benchURLs(b, func(dir string) (int64, error) {
		cfg.Input = dir
		res, err := Locality(cfg)
		if err != nil {
			return 0, err
		}
		return res.Rows[len(res.Rows)-1].Requests, nil
	})
}
