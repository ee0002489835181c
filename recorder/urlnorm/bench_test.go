package urlnorm

import (
	"fmt"
	"testing"
)

// benchURLs mixes canonical URLs (fast path) with ones that need the
// parser, roughly like extracted links.
var benchURLs = func() []string {
	var s []string
	for i := 0; i < 64; i++ {
		switch i % 4 {
		case 0, 1:
			s = append(s, fmt.Sprintf("http://www%d.example.com/dir/page%d.html?id=%d", i%7, i, i))
		case 2:
			s = append(s, fmt.Sprintf("HTTP://WWW%d.Example.com:80/a/../page%d.html#frag", i%7, i))
		default:
			s = append(s, fmt.Sprintf("http://www%d.example.com/%%7euser/p%d", i%7, i))
		}
	}
	return s
}()

func benchNormalize(b *testing.B, urls []string, f func(string) (string, error)) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := f(urls[n%len(urls)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "URLs/s")
}

func BenchmarkNormalize(b *testing.B) {
	b.Run("mixed", func(b *testing.B) { benchNormalize(b, benchURLs, Normalize) })
	b.Run("canonical", func(b *testing.B) { benchNormalize(b, []string{benchURLs[0]}, Normalize) })
	b.Run("canonical-slowpath", func(b *testing.B) { benchNormalize(b, []string{benchURLs[0]}, normalizeSlow) })
	b.Run("noncanonical", func(b *testing.B) { benchNormalize(b, []string{benchURLs[2]}, Normalize) })
}

func BenchmarkResolve(b *testing.B) {
	base, err := NewBase("http://www.example.com/dir/index.html")
	if err != nil {
		b.Fatal(err)
	}
	for _, ref := range []string{"/abs/page.html", "rel/page.html", "../up.html", "http://other.example.org/x"} {
		b.Run(ref, func(b *testing.B) { benchNormalize(b, []string{ref}, base.Resolve) })
	}
}
