package warcout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/gowarctest"
	gowarc "github.com/nlnwa/gowarc/v3"
)

func exchange(i int) *Exchange {
	body := fmt.Sprintf("<html><a href=/p%d>x</a></html>", i+1)
	return &Exchange{URL: fmt.Sprintf("http://a.test/p%d", i), Time: time.Unix(1700000000+int64(i), 0), PageID: uint64(i + 1), IP: "127.0.0.1",
		Request:  []byte(fmt.Sprintf("GET /p%d HTTP/1.1\r\nHost: a.test\r\nUser-Agent: t\r\n\r\n", i)),
		Response: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", len(body))),
		Body:     []byte(body)}
}

func add(w *Writer, from, to int) {
	for i := from; i < to; i++ {
		ex := exchange(i)
		w.Reserve(ex.Size())
		w.Add(ex)
	}
}

// readAll reads every record of the series in dir with gowarc, validating
// digests, and returns the target URI of each response.
func readAll(t *testing.T, dir string) (responses []string, records int) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*"+Suffix))
	gowarctest.Each(t, names, func(rec gowarc.WarcRecord) {
		records++
		if rec.Type() == gowarc.Response {
			responses = append(responses, rec.WarcHeader().Get(gowarc.WarcTargetURI))
			if !rec.WarcHeader().Has(gowarc.WarcPayloadDigest) {
				t.Errorf("no payload digest")
			}
		}
	})
	return responses, records
}

// A checkpoint, then records written after it and a torn record (a kill
// -9): the restore cuts them away, the crawl writes the pages again, and
// every page has exactly one response, in order, across rotated files.
func TestCheckpointRestore(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: filepath.Join(dir, "warc"), Prefix: "c-node000", MaxFileBytes: 2000}
	w := New(o)
	if _, err := w.Restore(nil, filepath.Join(dir, "discard")); err != nil {
		t.Fatal(err)
	}
	w.Start()
	add(w, 0, 10)
	st, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	stats := w.Stats()
	add(w, 10, 14) // written after the checkpoint: lost with the crash
	w.Checkpoint()
	w.Close()
	last := st.Files[len(st.Files)-1]
	f, _ := os.OpenFile(filepath.Join(o.Dir, last.Name), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("\x1f\x8b\x08\x00torn"))
	f.Close()

	w = New(o)
	moved, err := w.Restore(&st, filepath.Join(dir, "discard"))
	if err != nil || moved == 0 {
		t.Fatal(moved, err)
	}
	w.setStats(stats)
	w.Start()
	add(w, 10, 20)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, records := readAll(t, o.Dir)
	if len(got) != 20 {
		t.Fatalf("%d responses: %v", len(got), got)
	}
	for i, u := range got {
		if want := fmt.Sprintf("http://a.test/p%d", i); u != want {
			t.Errorf("response %d: %s, want %s", i, u, want)
		}
	}
	s := w.Stats()
	if s.Responses != 20 || s.Records != int64(records) || s.Files < 3 {
		t.Errorf("stats %+v, %d records read", s, records)
	}
	var size int64
	names, _ := filepath.Glob(filepath.Join(o.Dir, "*"+Suffix))
	for _, n := range names {
		fi, _ := os.Stat(n)
		size += fi.Size()
	}
	if s.Bytes != size {
		t.Errorf("stats say %d bytes, files hold %d", s.Bytes, size)
	}
	if !strings.HasSuffix(names[0], "c-node000-00000.warc.gz") {
		t.Errorf("%v", names)
	}
}

// BenchmarkWrite writes exchanges of a 2 KiB page, the demo web's size.
func BenchmarkWrite(b *testing.B) {
	w := New(Options{Dir: b.TempDir(), Prefix: "bench"})
	w.Restore(nil, b.TempDir())
	w.Start()
	ex := exchange(1)
	ex.Body = []byte(strings.Repeat("<a href=/p>x</a> ", 120))
	b.SetBytes(ex.Size())
	for i := 0; i < b.N; i++ {
		e := *ex
		w.Reserve(e.Size())
		w.Add(&e)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}
