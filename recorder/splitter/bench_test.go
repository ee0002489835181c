package splitter

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// BenchmarkSplitterLog measures the host splitter alone: partition, append
// to the raw URL log (Arrow builders, batch flushes, segment writes) and the
// DUE lookup, in URLs/s. log=false leaves the URL log out, and
// BenchmarkURLWriterAppend measures the log append alone.
func BenchmarkSplitterLog(b *testing.B) {
	for _, logOn := range []bool{true, false} {
		b.Run(fmt.Sprintf("log=%v", logOn), func(b *testing.B) {
			part, _ := partition.New("host", 4, 0)
			s := &Splitter{node: 0, part: part, tr: peer.NewTracker(), due: due.NewMemory(1 << 16),
				front: &testFrontier{}, out: make([]*peer.Batch, 4), batchSize: 1 << 30, now: time.Now, redirs: noRedirects{}}
			if logOn {
				uw, err := tracefile.CreateURLWriter(b.TempDir(), tracefile.Meta{Nodes: 4, Partitioner: "host"}, tracefile.DefaultWriterConfig())
				if err != nil {
					b.Fatal(err)
				}
				defer uw.Close()
				s.urlw = uw
			}
			msgs := benchMsgs()
			b.ResetTimer()
			n := 0
			for n < b.N {
				m := msgs[n/64%len(msgs)]
				s.process(m)
				n += len(m.URLs)
				for _, o := range s.out {
					if o != nil { // reuse the batch: the benchmark sends nothing
						o.URLs, o.Kinds, o.Source = o.URLs[:0], o.Kinds[:0], o.Source[:0]
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "urls/s")
		})
	}
}

func BenchmarkURLWriterAppend(b *testing.B) {
	uw, err := tracefile.CreateURLWriter(b.TempDir(), tracefile.Meta{Nodes: 4, Partitioner: "host"}, tracefile.DefaultWriterConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer uw.Close()
	msgs := benchMsgs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := msgs[i/64%len(msgs)]
		u := m.URLs[i%64]
		uw.Append(tracefile.URLRecord{Time: int64(i), URL: u.URL, Kind: u.Kind, Tag: u.Tag, Source: m.Source, Worker: m.Worker, Dest: 1})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

func benchMsgs() []*Msg {
	var msgs []*Msg
	for p := 0; p < 64; p++ {
		m := &Msg{Source: uint64(p + 1), Worker: 3}
		for l := 0; l < 64; l++ {
			m.URLs = append(m.URLs, URL{URL: fmt.Sprintf("http://h%04d.test/p/%d.html", (p*7+l)%500, l*13+p), Tag: "a", Kind: tracefile.URLLink})
		}
		msgs = append(msgs, m)
	}
	return msgs
}
