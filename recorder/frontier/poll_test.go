package frontier

import (
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/robots"
)

// TestPollVirtualClock drives the frontier as a deterministic crawl does:
// on a clock that moves only when told, with Poll instead of Next.
func TestPollVirtualClock(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := New(Options{Now: func() time.Time { return now }})
	if _, ok, wait, _ := f.Poll(); ok || wait >= 0 {
		t.Fatalf("empty frontier: ok %v wait %v", ok, wait)
	}
	g := f.Gen()
	f.Add("http://a.test/1")
	f.Add("http://a.test/2")
	if f.Gen() == g {
		t.Fatal("Add did not change gen")
	}
	task, ok, _, _ := f.Poll()
	if !ok || !task.Robots {
		t.Fatalf("first task %+v, want robots.txt", task)
	}
	f.RobotsDone(task.Host, "http://a.test", func(*robots.Rules) *robots.Rules { return robots.New(404, "", nil, "x") })
	f.ReleaseFetch(task.Host, 10*time.Millisecond, false)
	_, ok, wait, _ := f.Poll()
	if ok || wait != 10*time.Millisecond {
		t.Fatalf("after a 10ms fetch: ok %v wait %v, want the delay of 10ms", ok, wait)
	}
	now = now.Add(wait)
	task, ok, _, _ = f.Poll()
	if !ok || task.URL != "http://a.test/1" {
		t.Fatalf("at the delay's end: %+v %v", task, ok)
	}
	f.Close()
	if _, ok, _, _ := f.Poll(); ok {
		t.Fatal("closed frontier gave a task")
	}
}
