package due

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// BenchmarkDiskLoad resumes a disk DUE from a saved set of N fingerprints
// with the buffer `crawl --memory 256MiB` gives it (419,430 entries), as a
// resumed crawl's node does, and reports fingerprints loaded per second
// and the merges it took.
func BenchmarkDiskLoad(b *testing.B) {
	for _, n := range []int{1 << 20, 5 << 20} {
		b.Run(fmt.Sprintf("fps=%d", n), func(b *testing.B) {
			src, err := NewDisk(DiskConfig{Dir: b.TempDir(), BufferSize: n + 1})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				src.Add(uint64(i+1) * 0x9e3779b97f4a7c15)
			}
			var saved bytes.Buffer
			if err := src.Save(&saved); err != nil {
				b.Fatal(err)
			}
			src.Close()
			b.SetBytes(int64(saved.Len()))
			b.ResetTimer()
			var merges int64
			start := time.Now()
			for range b.N {
				d, err := NewDisk(DiskConfig{Dir: b.TempDir(), BufferSize: 256 << 20 / 16 / BufferBytesPerFingerprint})
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Load(bytes.NewReader(saved.Bytes())); err != nil {
					b.Fatal(err)
				}
				merges = d.Stats().Merges
				d.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "fps/s")
			b.ReportMetric(float64(merges), "merges")
		})
	}
}
