package condense

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/crawltrace/crawltrace/fingerprint"
)

// groupBuffer counts what countBuffer (sorting, the reference) counts, on
// ranges with repeats across nodes, fingerprints shared by two and three
// URLs, and more distinct fingerprints than the buffer's size suggests
// (so its table grows).
func TestGroupBufferMatchesSort(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		records, urls, nodes int
		fpBits               uint
		pad                  int
	}{
		{"repeats", 5000, 1500, 4, 64, 40},
		{"collisions", 5000, 1500, 6, 9, 0},
		{"many collisions", 3000, 600, 63, 7, 0},
		{"short records grow the table", 20000, 20000, 2, 64, 0},
		{"one record", 1, 1, 1, 64, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.records), uint64(tc.fpBits)))
			var buf []byte
			for range tc.records {
				k := rng.IntN(tc.urls)
				u := fmt.Sprintf("u%d", k)
				if tc.pad > 0 {
					u = fmt.Sprintf("http://h%d.test/%0*d", k%7, tc.pad, k)
				}
				// The fingerprint: k's, cut to fpBits (so that URLs
				// share it), then spread over 64 bits again.
				fp := uint64(k+1) * 0x9E3779B97F4A7C15 >> (64 - tc.fpBits) << (64 - tc.fpBits)
				var head [10]byte
				binary.LittleEndian.PutUint64(head[:], fp)
				binary.LittleEndian.PutUint16(head[8:], uint16(rng.IntN(tc.nodes)))
				buf = appendRec(buf, head[:], u)
			}
			want := newPartResult()
			if _, err := countBuffer(buf, nil, want); err != nil {
				t.Fatal(err)
			}
			got := newPartResult()
			var sc groupScratch
			if ok, err := groupBuffer(buf, &sc, got); !ok || err != nil {
				t.Fatalf("groupBuffer: %v %v", ok, err)
			}
			norm := func(p *partResult) *partResult {
				slices.SortFunc(p.total.Collisions, func(a, b Collision) int { return cmpCollision(a, b) })
				for _, c := range p.nodes {
					if c != nil {
						slices.SortFunc(c.Collisions, func(a, b Collision) int { return cmpCollision(a, b) })
					}
				}
				return p
			}
			if !reflect.DeepEqual(norm(got), norm(want)) {
				t.Fatalf("groupBuffer counted %d URLs, %d fingerprints, %d colliding, %d pairs; countBuffer %d, %d, %d, %d (or the nodes' counts differ)",
					got.total.DistinctURLs, got.total.DistinctFPs, got.total.CollidingFPs, got.total.CollisionPairs,
					want.total.DistinctURLs, want.total.DistinctFPs, want.total.CollidingFPs, want.total.CollisionPairs)
			}
			if tc.fpBits < 64 && (want.total.CollidingFPs == 0 || want.total.CollisionsTruncated) {
				t.Fatalf("the case should list all its collisions, and has some: %d fingerprints, truncated %v", want.total.CollidingFPs, want.total.CollisionsTruncated)
			}
			// The scratch is reused for the next range.
			again := newPartResult()
			if ok, err := groupBuffer(buf, &sc, again); !ok || err != nil || !reflect.DeepEqual(norm(again), want) {
				t.Fatalf("second use of the scratch: %v %v, %d URLs", ok, err, again.total.DistinctURLs)
			}
		})
	}
}

func cmpCollision(a, b Collision) int {
	if a.FP != b.FP {
		if a.FP < b.FP {
			return -1
		}
		return 1
	}
	if a.A != b.A {
		if a.A < b.A {
			return -1
		}
		return 1
	}
	if a.B < b.B {
		return -1
	}
	if a.B > b.B {
		return 1
	}
	return 0
}

// A record of node 64 or above is left to countBuffer, with nothing
// counted; a cut record is an error.
func TestGroupBufferDeclines(t *testing.T) {
	var head [10]byte
	binary.LittleEndian.PutUint64(head[:], 7)
	buf := appendRec(nil, head[:], "http://a.test/")
	binary.LittleEndian.PutUint16(head[8:], 64)
	buf = appendRec(buf, head[:], "http://b.test/")
	res := newPartResult()
	if ok, err := groupBuffer(buf, &groupScratch{}, res); ok || err != nil || !reflect.DeepEqual(res.total, Counts{}) {
		t.Fatalf("node 64: ok %v err %v counted %+v", ok, err, res.total)
	}
	if _, err := groupBuffer(buf[:len(buf)-3], &groupScratch{}, res); err == nil {
		t.Fatal("a cut record was not an error")
	}
}

// A crawl of 66 nodes is counted exactly end to end: its ranges hold
// records of nodes 64 and 65, which groupBuffer's node masks cannot, so
// the reduce counts them by sorting; at 12 bits, with colliding pairs.
func TestManyNodesCountedBySorting(t *testing.T) {
	in := t.TempDir()
	recs := makeCrawl(t, in, 66, 200, 3000, 31)
	rep := mustRun(t, Config{Input: in, Output: t.TempDir(), Bits: 12})
	h, _ := fingerprint.New(0, 12)
	if rep.Total.CollidingFPs == 0 {
		t.Fatal("fixture has no collisions")
	}
	checkBrute(t, rep, recs, h)
}
