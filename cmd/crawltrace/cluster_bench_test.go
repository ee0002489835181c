package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/partition"
)

// The cluster benchmarks run real crawltrace processes over loopback
// against an in-process test web of 24 hosts x 40 pages (min delay 20ms);
// run them with -benchtime 1x (each iteration is a whole crawl). See
// scripts/bench-cluster.sh.

const benchHosts, benchPages = 24, 40

// pageTimes returns, per page URL of node's page log, its fetch times.
func pageTimes(t testing.TB, dir string, node int) map[string][]time.Time {
	t.Helper()
	out := map[string][]time.Time{}
	eachPage(t, dir, node, func(r tracefile.PageRecord) { out[r.URL] = append(out[r.URL], time.Unix(0, r.Time)) })
	return out
}

// BenchmarkClusterFailover: time from node 2's SIGKILL to the first fetch
// of one of its hosts by its new owner (failure detector with
// --peer-timeout 1s, then reassignment), and to the reassign event.
func BenchmarkClusterFailover(b *testing.B) {
	web := startClusterWeb(b, benchHosts, benchPages)
	ring := partition.NewConsistent([]int{0, 1, 2}, 0)
	after := ring.Without(2)
	var recrawl, reassign time.Duration
	for range b.N {
		c := newCluster(b, web, 3, "--min-delay", "20ms", "--partitioner", "consistent", "--peer-timeout", "1s")
		killed := c.killWhenBusy(b, 2)
		c.waitNodes(b, 120*time.Second, 0, 1)
		var first time.Time
		for i := range 2 {
			for u, ts := range pageTimes(b, c.dir, i) {
				if ring.Node(u) == 2 && after.Node(u) == i {
					for _, x := range ts {
						if x.After(killed) && (first.IsZero() || x.Before(first)) {
							first = x
						}
					}
				}
			}
		}
		if first.IsZero() {
			b.Fatal("no host of node 2 was crawled again")
		}
		recrawl += first.Sub(killed)
		ev := firstEventTime(b, c.dir, "reassign")
		reassign += ev.Sub(killed)
	}
	b.ReportMetric(recrawl.Seconds()/float64(b.N), "s-to-recrawl")
	b.ReportMetric(reassign.Seconds()/float64(b.N), "s-to-reassign")
}

// firstEventTime is the earliest time of event kind in nodes 0 and 1.
func firstEventTime(b *testing.B, dir, kind string) time.Time {
	var first time.Time
	for i := range 2 {
		for _, e := range readEvents(b, dir, i) {
			if e.Event == kind && (first.IsZero() || e.Time.Before(first)) {
				first = e.Time
			}
		}
	}
	return first
}

// BenchmarkClusterRestart: batches sent again after node 1 is killed and
// restarted with --resume once its peers have queued batches for it (its
// own outbox plus what its peers resend to the new incarnation).
func BenchmarkClusterRestart(b *testing.B) {
	web := startClusterWeb(b, benchHosts, benchPages)
	var resent, sent int64
	for range b.N {
		c := newCluster(b, web, 3, "--min-delay", "20ms")
		c.killWhenBusy(b, 1)
		c.waitQueuedFor(b, 1, 30*time.Second)
		c.procs[1] = c.start(b, 1, "--resume")
		c.waitNodes(b, 120*time.Second, 0, 1, 2)
		for i := range 3 {
			s := readStats(b, c.dir, i)
			resent += s.BatchesResent
			sent += s.BatchesSent
		}
	}
	b.ReportMetric(float64(resent)/float64(b.N), "batches-resent")
	b.ReportMetric(float64(sent)/float64(b.N), "batches-sent")
}

// BenchmarkClusterThroughput: distinct pages per second of a 3-process
// crawl, from start to the last exit, without and with node 2 killed
// (consistent partitioner, --peer-timeout 1s).
func BenchmarkClusterThroughput(b *testing.B) {
	web := startClusterWeb(b, benchHosts, benchPages)
	for _, fail := range []bool{false, true} {
		b.Run(fmt.Sprintf("failure=%v", fail), func(b *testing.B) {
			var pages int
			var wall time.Duration
			for range b.N {
				start := time.Now()
				c := newCluster(b, web, 3, "--min-delay", "20ms", "--partitioner", "consistent", "--peer-timeout", "1s")
				live := []int{0, 1, 2}
				if fail {
					c.killWhenBusy(b, 2)
					live = live[:2]
				}
				c.waitNodes(b, 120*time.Second, live...)
				wall += time.Since(start)
				seen := map[string]bool{}
				for i := range 3 {
					for u := range pageTimes(b, c.dir, i) {
						seen[u] = true
					}
				}
				pages += len(seen)
			}
			b.ReportMetric(float64(pages)/wall.Seconds(), "pages/s")
			b.ReportMetric(float64(pages)/float64(b.N), "pages")
		})
	}
}
