package fingerprint

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// pack lays strs out as an Arrow string column does: one buffer and
// len(strs)+1 offsets, the first at base. The buffer goes on slack bytes
// past the last string.
func pack(strs []string, base int, slack ...int) ([]byte, []int32) {
	data := make([]byte, base)
	offs := []int32{int32(base)}
	for _, s := range strs {
		data = append(data, s...)
		offs = append(offs, int32(len(data)))
	}
	if len(slack) > 0 {
		data = append(data, make([]byte, slack[0])...)
	}
	return data, offs
}

func randString(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// checkAppend compares AppendOffsets with cespare/xxhash, string by
// string, on both paths.
func checkAppend(t *testing.T, h Hasher, strs []string, base int) {
	t.Helper()
	// With no slack the last groups are hashed one string at a time;
	// with 300 bytes every group of strings ≥ 8 bytes is hashed in lanes.
	for _, slack := range []int{0, 300} {
		checkPacked(t, h, strs, base, slack)
	}
}

func checkPacked(t *testing.T, h Hasher, strs []string, base, slack int) {
	t.Helper()
	data, offs := pack(strs, base, slack)
	seeded := xxhash.NewWithSeed(h.seed)
	for _, lanesOn := range []bool{useLanes, false} {
		saved := useLanes
		useLanes = lanesOn
		prefix := []uint64{7}
		got := h.AppendOffsets(prefix, data, offs)
		useLanes = saved
		if len(got) != len(strs)+1 || got[0] != 7 {
			t.Fatalf("lanes %v: got %d fingerprints after the prefix %d, want %d after 7", lanesOn, len(got)-1, got[0], len(strs))
		}
		for i, s := range strs {
			seeded.ResetWithSeed(h.seed)
			seeded.WriteString(s)
			if want := seeded.Sum64() & h.mask; got[i+1] != want {
				t.Fatalf("lanes %v, slack %d, seed %d, bits %d: string %d (%d bytes) = %#016x, want %#016x", lanesOn, slack, h.seed, h.bits, i, len(s), got[i+1], want)
			}
		}
	}
}

// Every length from 0 to 160 in every lane, beside strings of other
// lengths, so that lanes run different numbers of stripes, words and
// bytes in one group.
func TestAppendOffsetsEveryLengthEveryLane(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h64, _ := New(0, 64)
	for n := 0; n <= 160; n++ {
		for lane := range 8 {
			var strs []string
			for i := range 8 {
				if i == lane {
					strs = append(strs, randString(r, n))
				} else {
					strs = append(strs, randString(r, 8+r.IntN(120)))
				}
			}
			checkAppend(t, h64, strs, r.IntN(3))
			if !useLanes || n < 8 {
				continue
			}
			// The group is hashed in lanes, not handed back.
			data, offs := pack(strs, 0, 300)
			out := make([]uint64, 8)
			if got := sum64Lanes(data, offs, out, 1); got != 1 {
				t.Fatalf("%d bytes in lane %d: sum64Lanes hashed %d groups, want 1", n, lane, got)
			}
			for i, s := range strs {
				if want := xxhash.Sum64String(s); out[i] != want {
					t.Fatalf("%d bytes in lane %d: lane %d = %#016x, want %#016x", n, lane, i, out[i], want)
				}
			}
		}
	}
}

func TestAppendOffsetsMixes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h20, _ := New(0, 20)
	h42, _ := New(42, 64)
	for trial := range 300 {
		n := r.IntN(70)
		strs := make([]string, n)
		for i := range strs {
			switch trial % 3 {
			case 0: // URL-like: 8..120 bytes
				strs[i] = randString(r, 8+r.IntN(113))
			case 1: // some short strings among long ones
				strs[i] = randString(r, r.IntN(40))
			default: // one length, so lanes stay in step
				strs[i] = randString(r, 56)
			}
		}
		for _, h := range []Hasher{Default, h20, h42} {
			checkAppend(t, h, strs, r.IntN(9))
		}
	}
}

// The lanes path hashes whole groups of strings of 8 bytes or more and
// stops at a group with a shorter one.
func TestLanesStopAtShortString(t *testing.T) {
	if !useLanes {
		t.Skip("no AVX-512 on this CPU")
	}
	var strs []string
	for i := range 24 {
		strs = append(strs, "http://h.test/"+randString(rand.New(rand.NewPCG(uint64(i), 0)), i*3))
	}
	strs[21] = "short"
	data, offs := pack(strs, 0, 300)
	out := make([]uint64, 24)
	if got := sum64Lanes(data, offs, out, 3); got != 2 {
		t.Fatalf("sum64Lanes hashed %d groups, want 2 (the third has a 5-byte string)", got)
	}
	for i := range 16 {
		if want := xxhash.Sum64String(strs[i]); out[i] != want {
			t.Fatalf("string %d = %#016x, want %#016x", i, out[i], want)
		}
	}
	for i := 16; i < 24; i++ {
		if out[i] != 0 {
			t.Fatalf("string %d of the unhashed group was written", i)
		}
	}
}

func TestAppendOffsetsKnownAnswers(t *testing.T) {
	strs := []string{
		"http://example.com/", "https://www.example.org/index.html", "http://h0001.test/p/17",
		"http://example.com/", "https://www.example.org/index.html", "http://h0001.test/p/17",
		"http://example.com/", "https://www.example.org/index.html",
	}
	want := []uint64{0xfdb57b2d0813b5b1, 0x34d02cd36cdeee37, 0x562710c0595886ad}
	data, offs := pack(strs, 0)
	got := Default.AppendOffsets(nil, data, offs)
	for i := range got {
		if got[i] != want[i%3] {
			t.Errorf("%q = %#016x, want %#016x", strs[i], got[i], want[i%3])
		}
	}
}

func TestAppendOffsetsBadOffsetsPanic(t *testing.T) {
	data, offs := pack([]string{"http://a.test/1", "http://a.test/22", "http://a.test/333", "http://a.test/4444",
		"http://a.test/5", "http://a.test/66", "http://a.test/777", "http://a.test/8888"}, 0)
	for _, tc := range []struct {
		name string
		mod  func([]int32)
	}{
		{"past the end", func(o []int32) { o[8] = int32(len(data) + 1) }},
		{"decreasing", func(o []int32) { o[3], o[4] = o[4], o[3] }},
		{"negative", func(o []int32) { o[0] = -1 }},
	} {
		o := append([]int32(nil), offs...)
		tc.mod(o)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			Default.AppendOffsets(nil, data, o)
		}()
	}
}

func FuzzAppendOffsets(f *testing.F) {
	f.Add([]byte("http://example.com/index.htmlhttp://h.test/p/1"), []byte{19, 0, 5, 40, 3, 9, 9, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte, cuts []byte) {
		var strs []string
		rest := data
		for _, c := range cuts {
			n := min(int(c), len(rest))
			strs = append(strs, string(rest[:n]))
			rest = rest[n:]
		}
		checkAppend(t, Default, strs, 0)
	})
}

func BenchmarkAppendOffsets(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	strs := make([]string, 4096)
	total := 0
	for i := range strs {
		strs[i] = "http://www.h" + randString(r, 3) + ".test/" + randString(r, 20+r.IntN(40))
		total += len(strs[i])
	}
	data, offs := pack(strs, 0, 300)
	out := make([]uint64, 0, len(strs))
	for _, mode := range []struct {
		name  string
		lanes bool
	}{{"lanes", true}, {"scalar", false}} {
		if mode.lanes && !useLanes {
			continue
		}
		b.Run(mode.name, func(b *testing.B) {
			saved := useLanes
			useLanes = mode.lanes
			defer func() { useLanes = saved }()
			b.SetBytes(int64(total))
			for b.Loop() {
				out = Default.AppendOffsets(out[:0], data, offs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(strs)), "ns/string")
		})
	}
}

// BenchmarkAppendOffsetsLengths hashes URLs of the crawl-like traces'
// lengths (48-63 bytes) and of crawlpad's (48-143), where lanes of one
// group run different numbers of stripes.
func BenchmarkAppendOffsetsLengths(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, rg := range [][2]int{{48, 64}, {48, 144}} {
		strs := make([]string, 4096)
		for i := range strs {
			strs[i] = randString(r, rg[0]+r.IntN(rg[1]-rg[0]))
		}
		data, offs := pack(strs, 0, 300)
		out := make([]uint64, 0, len(strs))
		for _, l := range []bool{true, false} {
			if l && !useLanes {
				continue
			}
			b.Run(fmt.Sprintf("%d-%d/lanes=%v", rg[0], rg[1]-1, l), func(b *testing.B) {
				saved := useLanes
				useLanes = l
				defer func() { useLanes = saved }()
				for b.Loop() {
					out = Default.AppendOffsets(out[:0], data, offs)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(strs)), "ns/string")
			})
		}
	}
}
