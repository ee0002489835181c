package recorder

import (
	"reflect"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

// A crawl whose server queues spill to disk and whose DUE moves to disk
// midway (a tiny --memory) logs the same URLs and fetches the same pages
// as one that keeps both in memory.
func TestSpillingCrawl(t *testing.T) {
	crawltest.Waiting(t, "crawls a test web twice")
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.TrapHosts = 3, 600, 0
	srv := crawltest.Serve(t, wc)
	mem := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
	runCrawl(t, mem)
	disk := localConfig(t, srv.Addr(), srv.Web().Seeds()...)
	disk.Memory = 64 << 10
	res := runCrawl(t, disk)
	if res.Stats.FrontierSpillWritten == 0 || res.Stats.FrontierSpillRead != res.Stats.FrontierSpillWritten {
		t.Fatalf("spilled %d bytes, read back %d: want some, all read back", res.Stats.FrontierSpillWritten, res.Stats.FrontierSpillRead)
	}
	// The default DUE, auto, outgrew a quarter of the budget and moved to
	// disk midway.
	if res.Stats.DUE != DUEDisk || res.Stats.DUESwitchedAt == 0 || res.Stats.DUEUnique <= res.Stats.DUESwitchedAt {
		t.Fatalf("DUE %s, switched at %d of %d URLs: want a switch to disk midway", res.Stats.DUE, res.Stats.DUESwitchedAt, res.Stats.DUEUnique)
	}
	if a, b := urlMultiset(readURLs(t, mem.OutDir)), urlMultiset(readURLs(t, disk.OutDir)); !reflect.DeepEqual(a, b) {
		t.Fatalf("URL logs differ: %d rows in memory, %d spilled", len(a), len(b))
	}
	mp, _ := crawlSets(t, mem.OutDir, 1)
	dp, _ := crawlSets(t, disk.OutDir, 1)
	sameSet(t, "pages", mp, dp)
}
