package partition

import (
	"fmt"
	"testing"
)

func BenchmarkNode(b *testing.B) {
	urls := make([]string, 1024)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://www%d.site%d.example.co.uk/dir/page%d.html?id=%d", i%5, i, i, i)
	}
	for _, name := range Names() {
		for _, n := range []int{4, 64} {
			b.Run(fmt.Sprintf("%s/N=%d", name, n), func(b *testing.B) {
				p, err := New(name, n, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				i, sink := 0, 0
				for b.Loop() {
					sink += p.Node(urls[i&1023])
					i++
				}
				b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "URLs/s")
				_ = sink
			})
		}
	}
}

func BenchmarkHostOf(b *testing.B) {
	u := "http://www.example.com:8080/dir/page.html?id=1"
	n := 0
	for b.Loop() {
		n += len(HostOf(u))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
}
