package tracefile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Write a node's raw URL log and read it back batch by batch.
func Example() {
	dir, _ := os.MkdirTemp("", "tracefile-example")
	defer os.RemoveAll(dir)
	w, err := tracefile.CreateURLWriter(tracefile.NodeDir(dir, 0), tracefile.Meta{CrawlID: "example", Nodes: 1}, tracefile.WriterConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Append(tracefile.URLRecord{URL: "http://a.test/", Kind: tracefile.URLSeed})
	w.Append(tracefile.URLRecord{URL: "http://a.test/img.png", Kind: tracefile.URLLink, Tag: "img", Source: 1})
	w.Close()

	r, err := tracefile.OpenNodeURLs(dir, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for r.Next() {
		b := r.Batch()
		for i := 0; i < b.Len(); i++ {
			row := b.Row(i)
			fmt.Println(row.Seq, row.Kind, row.Tag, row.URL)
		}
	}
	seg := r.Segments()[0]
	fmt.Println(filepath.Ext(seg.File), seg.Rows, "rows, clean:", seg.Clean)
	// Output:
	// 0 seed  http://a.test/
	// 1 link img http://a.test/img.png
	// .arrows 2 rows, clean: true
}
