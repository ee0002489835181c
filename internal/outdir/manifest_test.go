package outdir

import (
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// The nodes of a TCP crawl each merge their entry into one manifest: the
// result lists every node, the earliest start and the latest finish; a
// manifest of another crawl is replaced, not merged.
func TestMergeManifest(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	node := func(crawl string, id int, created, finished time.Time) *tracefile.Manifest {
		m := tracefile.NewManifest(tracefile.Meta{CrawlID: crawl, Nodes: 3, Partitioner: "host", Created: created})
		m.Finished = finished
		m.AddNode(id, nil, nil)
		return m
	}
	if err := MergeManifest(dir, node("other", 0, t0, t0)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*tracefile.Manifest{
		node("c", 2, t0.Add(time.Second), t0.Add(time.Hour)),
		node("c", 0, t0.Add(2*time.Second), t0.Add(2*time.Hour)),
		node("c", 1, t0.Add(3*time.Second), t0.Add(30*time.Minute)),
	} {
		if err := MergeManifest(dir, m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tracefile.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, n := range got.NodeInfo {
		ids = append(ids, n.Node)
	}
	if got.CrawlID != "c" || len(ids) != 3 || !got.Created.Equal(t0.Add(time.Second)) || !got.Finished.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("merged manifest: crawl %q, nodes %v, created %v, finished %v; want crawl c, nodes 0-2, created %v, finished %v",
			got.CrawlID, ids, got.Created, got.Finished, t0.Add(time.Second), t0.Add(2*time.Hour))
	}
}
