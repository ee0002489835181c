package fetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestDecodeBodyErrors: corrupt streams of every coding are encoding
// errors; stacked codings are undone last first.
func TestDecodeBodyErrors(t *testing.T) {
	read := func(coding string, body []byte) (string, error) {
		h := http.Header{}
		h.Set("Content-Encoding", coding)
		r, err := decodeBody(h, bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(r)
		return string(b), decodeErr(h, err)
	}
	for _, tc := range []struct{ coding, body string }{
		{"gzip", "not gzip at all"},
		{"br", "\xff\xff\xff\xff not brotli"},
		{"deflate", "\x78\x9c not zlib"},
		{"deflate", "\xff\xff not deflate"},
		{"compress", "LZW"},
	} {
		if _, err := read(tc.coding, []byte(tc.body)); !errors.Is(err, ErrEncoding) {
			t.Errorf("%s %q: error %v, want an encoding error", tc.coding, tc.body, err)
		}
	}
	// gzip applied first, then br: "gzip, br".
	stacked := crawltest.Encode(t, "br", string(crawltest.Encode(t, "gzip", "<p>twice</p>")))
	if got, err := read("gzip, br", stacked); err != nil || got != "<p>twice</p>" {
		t.Errorf("stacked codings: %q, %v", got, err)
	}
	if got, err := read("identity", []byte("plain")); err != nil || got != "plain" {
		t.Errorf("identity: %q, %v", got, err)
	}
}

// TestDecodeBodyReused: decoders handed back by Close serve the next
// bodies, of every coding and from many goroutines at once, each body
// read whole and right (go test -race checks that no decoder is shared
// while in use); a closed body reads nothing more; and a gzip body costs
// a fraction of the 41 KB a new reader takes.
func TestDecodeBodyReused(t *testing.T) {
	type enc struct{ header, coding string }
	codings := []enc{{"gzip", "gzip"}, {"x-gzip", "gzip"}, {"deflate", "zlib"}, {"deflate", "deflate"}, {"br", "br"}}
	bodies := map[enc][][]byte{}
	page := func(i int) string { return strings.Repeat("<a href=/p"+strconv.Itoa(i)+">x</a>", 20+i%7) }
	for _, c := range codings {
		for i := range 8 {
			bodies[c] = append(bodies[c], crawltest.Encode(t, c.coding, page(i)))
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				c := codings[(g+i)%len(codings)]
				h := http.Header{"Content-Encoding": {c.header}}
				b, err := decodeBody(h, bytes.NewReader(bodies[c][i%8]))
				if err != nil {
					t.Errorf("%s body %d: %v", c.header, i%8, err)
					return
				}
				got, err := io.ReadAll(b)
				b.Close()
				if err != nil || string(got) != page(i%8) {
					t.Errorf("%s body %d, goroutine %d: %d bytes, %v; want %d bytes", c.header, i%8, g, len(got), err, len(page(i%8)))
				}
				if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
					t.Errorf("%s: a closed body read %d bytes, %v", c.header, n, err)
				}
			}
		})
	}
	wg.Wait()

	if raceOn {
		return
	}
	gz := bodies[enc{"gzip", "gzip"}][0]
	h := http.Header{"Content-Encoding": {"gzip"}}
	buf := make([]byte, 64<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		b, err := decodeBody(h, bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(b, buf)
		b.Close()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 8<<10 {
		t.Errorf("a gzip body allocates %d bytes, want the decoders reused (a new gzip reader is about 41 KB)", per)
	}
}
