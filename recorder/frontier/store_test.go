package frontier

import (
	"fmt"
	"reflect"
	"testing"
)

// Chunks read back as written, in any order, and the space of consumed
// chunks is given back.
func TestStoreRoundTrip(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var chunks []Chunk
	var want [][]Item
	for c := 0; c < 50; c++ {
		var items []Item
		for i := 0; i < c*7+1; i++ {
			items = append(items, Item{URL: fmt.Sprintf("http://h%d.test/%d?%s", c, i, string(rune('a'+i%26))), Q: float64(i) / 3})
		}
		ch, err := s.Write(items)
		if err != nil {
			t.Fatal(err)
		}
		chunks, want = append(chunks, ch), append(want, items)
	}
	for i := len(chunks) - 1; i >= 0; i -= 2 { // newest first, every other one
		got, err := s.Take(chunks[i], nil)
		if err != nil || !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("chunk %d: %v; got %d items, want %d", i, err, len(got), len(want[i]))
		}
	}
	for i := len(chunks) - 2; i >= 0; i -= 2 {
		if got, _ := s.Read(chunks[i], nil); !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("chunk %d read back wrong", i)
		}
		if _, err := s.Take(chunks[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.OnDisk != 0 || st.Written == 0 || st.Read < st.Written {
		t.Fatalf("stats %+v: want nothing left on disk", st)
	}
}
