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

func reportURLs(b *testing.B, urls int64) {
	b.ReportMetric(float64(urls)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

func BenchmarkPartition(b *testing.B) {
	dir := benchCrawl(b)
	cfg := DefaultPartitionConfig()
	cfg.Input, cfg.Plots = dir, false
	var urls int64
	for b.Loop() {
		res, err := Partition(cfg)
		if err != nil {
			b.Fatal(err)
		}
		urls = res.Rows[0].URLs
	}
	reportURLs(b, urls)
	b.ReportMetric(float64(len(cfg.Nodes)*len(cfg.Partitioners)), "configs")
}

func BenchmarkNodeLoss(b *testing.B) {
	dir := benchCrawl(b)
	cfg := DefaultNodeLossConfig()
	cfg.Input = dir
	var urls int64
	for b.Loop() {
		res, err := NodeLoss(cfg)
		if err != nil {
			b.Fatal(err)
		}
		urls = res.Rows[0].URLs
	}
	reportURLs(b, urls)
}

func BenchmarkLocality(b *testing.B) {
	dir := benchCrawl(b)
	cfg := DefaultLocalityConfig()
	cfg.Input = dir
	var urls int64
	for b.Loop() {
		res, err := Locality(cfg)
		if err != nil {
			b.Fatal(err)
		}
		urls = res.Rows[len(res.Rows)-1].Requests
	}
	reportURLs(b, urls)
}
