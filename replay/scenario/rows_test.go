package scenario

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// node-loss-live, pinned: the live reassignments' table as node-loss
// writes it for a crawl that lost a node (time in UTC with nanoseconds,
// node lists as printed, Live not a column).
func TestNodeLossLiveTablePinned(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 30, 5, 250_000_000, time.FixedZone("x", 3600))
	res := &NodeLossResult{Live: []LiveReassign{
		{Node: 1, Time: at, Left: []int{0}, Live: []int{1, 2}, HostsMoved: 7, HostsMovedOther: 0, HostsIn: 4, URLsRerouted: 12},
		{Node: 2, Time: at.Add(time.Second), Left: []int{0, 3}, Joined: []int{4}, HostsMoved: 9, HostsMovedOther: 2, HostsIn: 0, URLsRerouted: 0},
	}}
	tables := res.Tables()
	if len(tables) != 3 || tables[2].Name != "node-loss-live" {
		t.Fatalf("%d tables, want node-loss, node-loss-nodes and node-loss-live", len(tables))
	}
	var got bytes.Buffer
	if err := tables[2].WriteCSV(&got); err != nil {
		t.Fatal(err)
	}
	want := "node,time,left,joined,hosts_moved,hosts_moved_other,hosts_in,urls_rerouted\n" +
		"1,2026-03-01T11:30:05.25Z,[0],[],7,0,4,12\n" +
		"2,2026-03-01T11:30:06.25Z,[0 3],[4],9,2,0,0\n"
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
	if len((&NodeLossResult{}).Tables()) != 2 {
		t.Error("a crawl without reassignments has a node-loss-live table")
	}
}

// The locality table, pinned: ByClass is one column per class, in class
// order, between hit_rate and same_host_fraction; NaN is a blank cell.
func TestLocalityTablePinned(t *testing.T) {
	res := &LocalityResult{Rows: []LocalityRow{{Node: -1, Size: 8, Requests: 10, Hits: 6, HitRate: 0.6,
		ByClass: [numClasses]int64{1, 2, 3, 0}, SameHostFraction: nan()}}}
	var got bytes.Buffer
	if err := res.Tables()[0].WriteCSV(&got); err != nil {
		t.Fatal(err)
	}
	want := "node,size,requests,hits,hit_rate,same_page,same_host,other_host,unknown,same_host_fraction\n-1,8,10,6,0.6,1,2,3,0,\n"
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
}

func nan() float64 { return ratio(0, 0) }

// A digest takes its columns by json name: NaN and not-applicable cells
// are nulls, and with totals only the rows of node -1 are kept.
func TestDigestPinned(t *testing.T) {
	pr := &PartitionResult{Rows: []PartitionRow{
		{Partitioner: "host", Nodes: 2, CrossFraction: 0.5, CrossBytes: 40, BalanceURLs: nan(), BalanceHosts: 1.25, DestMismatches: -1},
	}}
	b, err := json.Marshal(digest[PartitionDigest](pr.Tables()[0], false))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"partitioner":"host","nodes":2,"cross_fraction":0.5,"cross_bytes":40,"balance_urls":null,"balance_hosts":1.25,"dest_mismatches":null}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	tr := &ThreadsResult{Rows: []ThreadsRow{{Node: 0, Size: 4, Workers: 2}, {Node: -1, Size: 4, Workers: 3, GlobalMissRate: 0.25, ThreadMissRate: nan()}}}
	b, _ = json.Marshal(digest[ThreadsDigest](tr.Tables()[0], true))
	want = `[{"size":4,"workers":3,"global_miss_rate":0.25,"thread_miss_rate":null}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
