package fingerprint

import (
	"fmt"
	"math"
	"testing"
)

// Known answers. Traces on disk depend on these values: if this test fails
// after a dependency bump, fingerprints changed and old traces no longer
// match new ones.
func TestURLKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"http://example.com/", 0xfdb57b2d0813b5b1},
		{"https://www.example.org/index.html", 0x34d02cd36cdeee37},
		{"http://h0001.test/p/17", 0x562710c0595886ad},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %#016x, want %#016x", tc.in, got, tc.want)
		}
		if got := Bytes([]byte(tc.in)); got != tc.want {
			t.Errorf("Bytes(%q) = %#016x, want %#016x", tc.in, got, tc.want)
		}
		if got := Default.String(tc.in); got != tc.want {
			t.Errorf("Default.String(%q) = %#016x, want %#016x", tc.in, got, tc.want)
		}
	}
}

func TestSeedAndTruncation(t *testing.T) {
	h, err := New(42, 64)
	if err != nil {
		t.Fatal(err)
	}
	if h.String("http://example.com/") == URL("http://example.com/") {
		t.Fatal("seed 42 gave the seed-0 fingerprint")
	}
	if got, want := h.String("http://example.com/"), uint64(0x123b2dbe1b616641); got != want {
		t.Errorf("seed 42: got %#016x, want %#016x", got, want)
	}
	for _, bits := range []int{1, 8, 16, 63} {
		h, _ := New(0, bits)
		for i := 0; i < 1000; i++ {
			s := fmt.Sprintf("http://h%d.test/", i)
			fp := h.String(s)
			if fp>>uint(bits) != 0 {
				t.Fatalf("bits=%d: %#x has high bits set", bits, fp)
			}
			if fp != URL(s)&(1<<uint(bits)-1) {
				t.Fatalf("bits=%d: truncation is not the low bits of the full fingerprint", bits)
			}
		}
	}
	for _, bad := range []int{0, -1, 65} {
		if _, err := New(0, bad); err == nil {
			t.Errorf("New(0, %d): no error", bad)
		}
	}
}

func TestExpectedCollisions(t *testing.T) {
	if got := ExpectedCollisions(1, 64); got != 0 {
		t.Errorf("one item: %v", got)
	}
	// 2^16 items at 16 bits: n(n-1)/2^17 = (65536*65535)/131072 = 32767.5
	if got := ExpectedCollisions(65536, 16); math.Abs(got-32767.5) > 1e-9 {
		t.Errorf("got %v, want 32767.5", got)
	}
	// The paper's scale: 6.4e9 distinct URLs at 64 bits -> ~1.11 pairs.
	if got := ExpectedCollisions(6.4e9, 64); got < 1.0 || got > 1.2 {
		t.Errorf("6.4e9 at 64 bits: %v", got)
	}
}

// Empirically, truncated fingerprints collide about as often as predicted.
func TestTruncatedCollisionRate(t *testing.T) {
	h, _ := New(0, 16)
	const n = 2000
	seen := map[uint64]int{}
	pairs := 0
	for i := 0; i < n; i++ {
		fp := h.String(fmt.Sprintf("http://h%d.test/page/%d", i%37, i))
		pairs += seen[fp]
		seen[fp]++
	}
	want := ExpectedCollisions(n, 16) // ~30.5
	if float64(pairs) < want/2 || float64(pairs) > want*2 {
		t.Errorf("%d colliding pairs among %d at 16 bits, expected about %.1f", pairs, n, want)
	}
}

func ExampleURL() {
	fmt.Printf("%#016x\n", URL("http://example.com/"))
	// Output: 0xfdb57b2d0813b5b1
}

func BenchmarkURL(b *testing.B) {
	u := "http://www.example.com/some/path/to/a/page/index.html?id=12345"
	b.SetBytes(int64(len(u)))
	for i := 0; i < b.N; i++ {
		_ = URL(u)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}
