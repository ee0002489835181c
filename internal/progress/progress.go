// Package progress prints the progress of crawltrace's long steps (crawl,
// condense, replay, scenario, demo) to a [Sink]: on a terminal one line
// rewritten in place, elsewhere (a batch job's log) a plain line every
// [Sink.Every], 10 s by default. Each line has the elapsed time, the count
// done, the rate and, when the total is known, the percentage and the ETA:
//
//	crawl: 2m10s 1234/10000 pages (12.3%), 9.5 pages/s, ETA 15m24s; queued 880, hosts 51
//
// Libraries take an io.Writer for progress (nil for none); a *Sink carries
// the mode and the clock through it, and any other writer is treated as a
// terminal.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Mode is the value of the --progress flag.
type Mode string

// The progress modes.
const (
	Auto   Mode = "auto"   // live line on a terminal, batch lines elsewhere
	Always Mode = "always" // batch lines, even on a terminal
	Never  Mode = "never"  // nothing
)

// Modes lists the modes, for flag help and completion.
func Modes() []string { return []string{string(Auto), string(Always), string(Never)} }

// ParseMode parses a --progress value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Always, Never:
		return m, nil
	}
	return "", fmt.Errorf("progress mode %q: want auto, always or never", s)
}

// DefaultEvery is the interval of batch lines.
const DefaultEvery = 10 * time.Second

// liveEvery is the least interval between updates of a live line.
const liveEvery = 200 * time.Millisecond

// Sink is where progress lines go. Writes are passed to W unchanged, so a
// *Sink can stand wherever an io.Writer for progress is taken. A Sink is
// safe for concurrent use if W is.
type Sink struct {
	W io.Writer
	// Live rewrites one line in place (a terminal); otherwise a line is
	// printed every Every.
	Live bool
	// Every is the interval of batch lines; 0 means DefaultEvery, a
	// negative value a line at every update (for tests).
	Every time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewSink returns the sink of mode m for stderr (terminal: whether stderr
// is one), or nil for Never.
func NewSink(m Mode, stderr io.Writer, terminal bool) *Sink {
	switch m {
	case Never:
		return nil
	case Always:
		return &Sink{W: stderr}
	}
	return &Sink{W: stderr, Live: terminal}
}

func (s *Sink) Write(p []byte) (int, error) { return s.W.Write(p) }

// sinkOf returns the sink behind w: w itself when it is a *Sink, a live
// sink on w for any other writer, nil for none.
func sinkOf(w io.Writer) *Sink {
	switch s := w.(type) {
	case nil:
		return nil
	case *Sink:
		return s
	}
	return &Sink{W: w, Live: true}
}

// Reporter reports one step's progress. A nil *Reporter does nothing, so
// callers need not check. It is safe for concurrent use.
type Reporter struct {
	mu      sync.Mutex
	s       Sink
	every   time.Duration
	name    string
	unit    string
	total   int64
	done    int64
	extra   string
	start   time.Time
	last    time.Time
	printed bool
}

// New starts reporting a step called name, counting unit (e.g. "pages") up
// to total (0 when unknown), to w (see [Sink]). It returns nil when w is
// nil.
func New(w io.Writer, name, unit string, total int64) *Reporter {
	s := sinkOf(w)
	if s == nil {
		return nil
	}
	r := &Reporter{s: *s, name: name, unit: unit, total: total}
	if r.s.Now == nil {
		r.s.Now = time.Now
	}
	switch {
	case r.s.Live:
		r.every = liveEvery
	case r.s.Every == 0:
		r.every = DefaultEvery
	case r.s.Every > 0:
		r.every = r.s.Every
	}
	r.start = r.s.Now()
	r.last = r.start
	return r
}

// Set records that done units are done (counts only grow: a smaller value
// from a slower goroutine is ignored) and prints a line when one is due.
func (r *Reporter) Set(done int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = max(r.done, done)
	r.maybePrint()
}

// Add records n more units done.
func (r *Reporter) Add(n int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done += n
	r.maybePrint()
}

// Update sets the count done and extra, shown after the counts (e.g.
// "queued 880, hosts 51"), and prints a line when one is due.
func (r *Reporter) Update(done int64, extra string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = max(r.done, done)
	r.extra = extra
	r.maybePrint()
}

// Finish ends the step: a live line is ended with a newline. Batch mode
// prints nothing more (the command's own summary follows).
func (r *Reporter) Finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s.Live && r.printed {
		fmt.Fprintln(r.s.W)
	}
	r.printed = false
}

func (r *Reporter) maybePrint() {
	now := r.s.Now()
	if now.Sub(r.last) < r.every {
		return
	}
	r.last = now
	line := Line(r.name, r.unit, now.Sub(r.start), r.done, r.total, r.extra)
	if r.s.Live {
		fmt.Fprintf(r.s.W, "\r%s\x1b[K", line) // erase what a longer line left
	} else {
		fmt.Fprintln(r.s.W, line)
	}
	r.printed = true
}

// Line formats one progress line: name, elapsed time, done (of total when
// total > 0, with the percentage), the rate per second, the ETA when the
// total is known and the rate is positive, and extra.
func Line(name, unit string, elapsed time.Duration, done, total int64, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s ", name, Duration(elapsed))
	if total > 0 {
		fmt.Fprintf(&b, "%d/%d %s (%.1f%%)", done, total, unit, 100*float64(min(done, total))/float64(total))
	} else {
		fmt.Fprintf(&b, "%d %s", done, unit)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	fmt.Fprintf(&b, ", %s %s/s", Rate(rate), unit)
	if total > 0 && rate > 0 && done < total {
		eta := time.Duration(float64(total-done) / rate * float64(time.Second))
		fmt.Fprintf(&b, ", ETA %s", Duration(eta))
	}
	if extra != "" {
		b.WriteString("; ")
		b.WriteString(extra)
	}
	return b.String()
}

// Duration formats d to whole seconds: 45s, 2m10s, 3h04m05s.
func Duration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}

// Rate formats a rate with three significant digits and k/M/G suffixes.
func Rate(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
