package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// clock is a manual clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		elapsed     time.Duration
		done, total int64
		extra, want string
	}{
		{10 * time.Second, 100, 0, "", "crawl: 10s 100 pages, 10 pages/s"},
		{10 * time.Second, 100, 1000, "", "crawl: 10s 100/1000 pages (10.0%), 10 pages/s, ETA 1m30s"},
		{130 * time.Second, 1300, 1000, "queued 5", "crawl: 2m10s 1300/1000 pages (100.0%), 10 pages/s; queued 5"},
		{0, 0, 50, "", "crawl: 0s 0/50 pages (0.0%), 0 pages/s"},
		{time.Hour + 4*time.Minute + 5*time.Second, 3_845_000_000, 0, "", "crawl: 1h04m05s 3845000000 pages, 1M pages/s"},
		{time.Second, 25_000, 100_000, "", "crawl: 1s 25000/100000 pages (25.0%), 25k pages/s, ETA 3s"},
	} {
		if got := Line("crawl", "pages", tc.elapsed, tc.done, tc.total, tc.extra); got != tc.want {
			t.Errorf("Line(%v, %d, %d) = %q, want %q", tc.elapsed, tc.done, tc.total, got, tc.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
		ok   bool
	}{{"auto", Auto, true}, {"always", Always, true}, {"never", Never, true}, {"", "", false}, {"yes", "", false}} {
		got, err := ParseMode(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseMode(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func TestNewSink(t *testing.T) {
	var w bytes.Buffer
	for _, tc := range []struct {
		m             Mode
		terminal      bool
		wantNil, live bool
	}{
		{Auto, true, false, true}, {Auto, false, false, false},
		{Always, true, false, false}, {Always, false, false, false},
		{Never, true, true, false}, {Never, false, true, false},
	} {
		s := NewSink(tc.m, &w, tc.terminal)
		if (s == nil) != tc.wantNil || (s != nil && s.Live != tc.live) {
			t.Errorf("NewSink(%s, terminal %v) = %+v", tc.m, tc.terminal, s)
		}
	}
}

// Batch mode: one line every 10 s of the injected clock, however often
// the step updates; nothing before the first 10 s or at the end.
func TestBatchLines(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	var w bytes.Buffer
	r := New(&Sink{W: &w, Now: c.now}, "replay", "runs", 40)
	for i := 1; i <= 40; i++ {
		c.advance(time.Second)
		r.Set(int64(i))
	}
	r.Finish()
	want := "replay: 10s 10/40 runs (25.0%), 1 runs/s, ETA 30s\n" +
		"replay: 20s 20/40 runs (50.0%), 1 runs/s, ETA 20s\n" +
		"replay: 30s 30/40 runs (75.0%), 1 runs/s, ETA 10s\n" +
		"replay: 40s 40/40 runs (100.0%), 1 runs/s\n"
	if w.String() != want {
		t.Errorf("batch output:\n%s\nwant:\n%s", w.String(), want)
	}
	if strings.Contains(w.String(), "\r") {
		t.Error("carriage return in batch mode")
	}
}

// Live mode rewrites one line and ends it at Finish.
func TestLiveLine(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	var w bytes.Buffer
	r := New(&Sink{W: &w, Live: true, Now: c.now}, "crawl", "pages", 0)
	r.Update(5, "queued 3")
	c.advance(time.Second)
	r.Update(10, "queued 4")
	c.advance(100 * time.Millisecond) // too soon for another update
	r.Update(11, "queued 4")
	r.Finish()
	if want := "\rcrawl: 1s 10 pages, 10 pages/s; queued 4\x1b[K\n"; w.String() != want {
		t.Errorf("live output %q, want %q", w.String(), want)
	}
}

// A plain writer is a terminal (the libraries' behaviour before sinks);
// nil reports nothing; counts from several goroutines never go backwards.
func TestWritersAndNil(t *testing.T) {
	var r *Reporter = New(nil, "x", "rows", 1)
	r.Set(1)
	r.Add(1)
	r.Update(1, "")
	r.Finish()
	var w bytes.Buffer
	if s := sinkOf(&w); !s.Live || s.W != &w {
		t.Errorf("sinkOf(plain writer) = %+v", s)
	}
	c := &clock{t: time.Unix(0, 0)}
	r = New(&Sink{W: &w, Every: -1, Now: c.now}, "condense", "rows", 0)
	r.Set(10)
	r.Set(5)
	r.Add(2)
	if got := w.String(); !strings.HasSuffix(got, "condense: 0s 12 rows, 0 rows/s\n") || strings.Count(got, "\n") != 3 {
		t.Errorf("every update with Every < 0: %q", got)
	}
}

func TestRate(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 12.5: "12.5", 950: "950", 12345: "12.3k", 2.48e6: "2.48M", 999e6: "999M", 7.88e9: "7.88G", 1.1e13: "1.1e+04G",
	} {
		if got := Rate(v); got != want {
			t.Errorf("Rate(%g) = %q, want %q", v, got, want)
		}
	}
}
