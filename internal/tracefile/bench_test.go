package tracefile

import (
	"testing"
)

// BenchmarkURLWriterAppend measures the logging path of the host splitter:
// appending rows to a raw URL log, flushes and segment writes included.
func BenchmarkURLWriterAppend(b *testing.B) {
	recs := genURLs(1<<16, 9)
	var bytes int64
	for _, r := range recs {
		bytes += int64(len(r.URL))
	}
	w, err := CreateURLWriter(b.TempDir(), testMeta(0), WriterConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes / int64(len(recs)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Append(recs[i&(1<<16-1)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkCondensedRead measures zero-copy reading of a condensed trace.
func BenchmarkCondensedRead(b *testing.B) {
	path := b.TempDir() + "/t.arrow"
	fps := make([]uint64, 4<<20)
	for i := range fps {
		fps[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	if err := WriteCondensed(path, testMeta(0), fps); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(fps)) * 8)
	b.ResetTimer()
	var sum uint64
	for i := 0; i < b.N; i++ {
		r, err := OpenCondensed(path)
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
			for _, fp := range r.FPs() {
				sum += fp
			}
		}
		r.Close()
	}
	_ = sum
	b.ReportMetric(float64(b.N*len(fps))/b.Elapsed().Seconds(), "fps/s")
}
