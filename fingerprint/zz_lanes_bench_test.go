package fingerprint

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkLanesRange(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, rg := range [][2]int{{48, 64}, {48, 144}} {
		strs := make([]string, 4096)
		for i := range strs {
			strs[i] = randString(r, rg[0]+r.IntN(rg[1]-rg[0]))
		}
		data, offs := pack(strs, 0)
		out := make([]uint64, 0, len(strs))
		for _, l := range []bool{true, false} {
			b.Run(fmt.Sprintf("%d-%d/%v", rg[0], rg[1], l), func(b *testing.B) {
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
