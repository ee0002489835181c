package streamcopy

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Lines copies every byte, at every alignment of the destination (16-byte
// aligned ones take the non-temporal path), and nothing beyond.
func TestLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 64, 128, 192, 4096, 64 << 10} {
		for shift := 0; shift < 48; shift += 8 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			buf := make([]byte, n+shift+64)
			for i := range buf {
				buf[i] = 0xAA
			}
			dst := buf[shift : shift+n]
			if got := Lines(dst, src); got != n {
				t.Fatalf("n %d shift %d: copied %d", n, shift, got)
			}
			Fence()
			if !bytes.Equal(dst, src) {
				t.Fatalf("n %d shift %d: bytes differ", n, shift)
			}
			for i, c := range buf[shift+n:] {
				if c != 0xAA {
					t.Fatalf("n %d shift %d: byte %d past the end written", n, shift, i)
				}
			}
			for i, c := range buf[:shift] {
				if c != 0xAA {
					t.Fatalf("n %d shift %d: byte %d before the start written", n, shift, i)
				}
			}
		}
	}
}

func TestLinesRejectsPartialLines(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on 65 bytes")
		}
	}()
	Lines(make([]byte, 65), make([]byte, 65))
}

// BenchmarkScatter appends records of 60-99 bytes to 1,024 partitions'
// 64 KiB buffers at random, as condense's spill does: directly, or
// through 256-byte staging buffers moved to the partitions a whole line
// at a time with Lines.
func BenchmarkScatter(b *testing.B) {
	const parts, blk, recs, stage = 1024, 64 << 10, 1 << 22, 256
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([][]byte, 4096)
	for i := range pool {
		pool[i] = bytes.Repeat([]byte{'u'}, 60+rng.IntN(40))
	}
	dest := make([]int, recs)
	for i := range dest {
		dest[i] = rng.IntN(parts)
	}
	run := func(b *testing.B, staged bool) {
		bufs := make([][]byte, parts)
		for i := range bufs {
			bufs[i] = make([]byte, 0, blk)
		}
		st := make([]byte, parts*stage)
		fill := make([]int, parts)
		var moved int64
		for b.Loop() {
			for i, g := range dest {
				u := pool[i&4095]
				moved += int64(len(u))
				if !staged {
					if len(bufs[g])+len(u) > blk {
						bufs[g] = bufs[g][:0]
					}
					bufs[g] = append(bufs[g], u...)
					continue
				}
				s, f := st[g*stage:(g+1)*stage], fill[g]
				if f+len(u) > stage {
					whole := f &^ 63
					if len(bufs[g])+whole > blk {
						bufs[g] = bufs[g][:0]
					}
					k := len(bufs[g])
					bufs[g] = bufs[g][:k+whole]
					Lines(bufs[g][k:], s[:whole])
					f = copy(s, s[whole:f])
				}
				fill[g] = f + copy(s[f:], u)
			}
		}
		Fence()
		b.SetBytes(moved / int64(b.N))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*recs), "ns/record")
	}
	b.Run("direct", func(b *testing.B) { run(b, false) })
	b.Run("staged", func(b *testing.B) { run(b, true) })
}
