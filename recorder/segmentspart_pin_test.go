package recorder

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// pinnedSegments is a segments part as written by main at 5177645: gob
// writes the names of its types (savedSegments, savedLog,
// []tracefile.SegmentInfo, SegmentInfo) and of their fields, so a rename
// or a move that changes them changes every checkpoint's bytes.
const pinnedSegments = "2f7f0301010d73617665645365676d656e747301ff80000102010455524c7301ff82000105506167657301ff8200000036ff810301010873617665644c6f6701ff820001030104446f6e6501ff860001044f70656e01ff840001074e657874536571010600000026ff85020101175b5d747261636566696c652e5365676d656e74496e666f01ff860001ff8400005fff830301010b5365676d656e74496e666f01ff84000107010446696c65010c000104526f7773010400010742617463686573010400010542797465730104000105436c65616e01020001054572726f72010c0001055858483634010c000000ffa3ff80010101011275726c732d3030303030312e6172726f777301fff0010601fe23ae01010210303132333435363738396162636465660001011275726c732d3030303030322e6172726f7773010e010201fe06f403106665646362613938373635343332313000017f000102011370616765732d3030303030312e6172726f7773010a010201fe05780203637574011030303131323233336161626263636464000000"

var pinnedSegmentsValue = savedSegments{
	URLs: savedLog{Done: []tracefile.SegmentInfo{{File: "urls-000001.arrows", Rows: 120, Batches: 3, Bytes: 4567, Clean: true, XXH64: "0123456789abcdef"}},
		Open: tracefile.SegmentInfo{File: "urls-000002.arrows", Rows: 7, Batches: 1, Bytes: 890, XXH64: "fedcba9876543210"}, NextSeq: 127},
	Pages: savedLog{Open: tracefile.SegmentInfo{File: "pages-000001.arrows", Rows: 5, Batches: 1, Bytes: 700, Error: "cut", XXH64: "00112233aabbccdd"}},
}

// The segments part's bytes are pinned, and pinned bytes read back.
func TestSegmentsPartPinned(t *testing.T) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&pinnedSegmentsValue); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b.Bytes()); got != pinnedSegments {
		t.Errorf("the segments part encodes as\n%s\nwant\n%s", got, pinnedSegments)
	}
	raw, _ := hex.DecodeString(pinnedSegments)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "segments"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := readSavedSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*v, pinnedSegmentsValue) {
		t.Errorf("pinned bytes read back as %+v", *v)
	}
}
