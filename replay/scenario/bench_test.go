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
// second the count urls takes from its result.
func benchURLs[R any](b *testing.B, run func(dir string) (R, error), urls func(R) int64) {
	dir := benchCrawl(b)
	var n int64
	for b.Loop() {
		res, err := run(dir)
		if err != nil {
			b.Fatal(err)
		}
		n = urls(res)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

func BenchmarkPartition(b *testing.B) {
	cfg := DefaultPartitionConfig()
	cfg.Plots = false
	benchURLs(b, func(dir string) (*PartitionResult, error) { cfg.Input = dir; return Partition(cfg) },
		func(r *PartitionResult) int64 { return r.Rows[0].URLs })
	b.ReportMetric(float64(len(cfg.Nodes)*len(cfg.Partitioners)), "configs")
}

func BenchmarkNodeLoss(b *testing.B) {
	cfg := DefaultNodeLossConfig()
	benchURLs(b, func(dir string) (*NodeLossResult, error) { cfg.Input = dir; return NodeLoss(cfg) },
		func(r *NodeLossResult) int64 { return r.Rows[0].URLs })
}

func BenchmarkLocality(b *testing.B) {
	cfg := DefaultLocalityConfig()
	benchURLs(b, func(dir string) (*LocalityResult, error) { cfg.Input = dir; return Locality(cfg) },
		func(r *LocalityResult) int64 { return r.Rows[len(r.Rows)-1].Requests })
}
