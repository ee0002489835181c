package launch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func rdv(dir string, node, nodes int, crawl string) Rendezvous {
	return Rendezvous{Dir: dir, Node: node, Nodes: nodes, Addr: fmt.Sprintf("h%d:%d", node, 7400+node), CrawlID: crawl,
		Timeout: 5 * time.Second, Poll: 2 * time.Millisecond}
}

func TestRendezvousRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   func(dir string) []Rendezvous
		want string
	}{
		{"two tasks with one node id", func(dir string) []Rendezvous {
			a, b := rdv(dir, 0, 2, "c"), rdv(dir, 0, 2, "c")
			b.Addr = "other:7400"
			return []Rendezvous{a, b}
		}, "node 0 of crawl c is already registered at"},
		{"another number of nodes", func(dir string) []Rendezvous {
			return []Rendezvous{rdv(dir, 0, 2, "c"), rdv(dir, 1, 3, "c")}
		}, "registered for"},
		{"two nodes at one address", func(dir string) []Rendezvous {
			a, b := rdv(dir, 0, 2, "c"), rdv(dir, 1, 2, "c")
			b.Addr = a.Addr
			return []Rendezvous{a, b}
		}, "two nodes cannot share an address"},
		{"no port", func(dir string) []Rendezvous {
			a := rdv(dir, 0, 1, "c")
			a.Addr = "h"
			return []Rendezvous{a}
		}, "not host:port"},
		{"no crawl id", func(dir string) []Rendezvous { return []Rendezvous{rdv(dir, 0, 1, "")} }, "no crawl id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rs := tc.rs(dir)
			// One after the other, so that the second meets the first's file.
			var errs []error
			for _, r := range rs {
				r.Timeout = 100 * time.Millisecond
				_, err := r.Join(context.Background())
				errs = append(errs, err)
			}
			err := errors.Join(errs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("errors %v, want one with %q", errs, tc.want)
			}
			if !errors.Is(err, ErrInput) {
				t.Errorf("%v is not ErrInput", err)
			}
		})
	}
}

// A node whose peers never come stops after its timeout, naming them and
// a file left by another crawl; a canceled context stops it at once.
func TestRendezvousTimeout(t *testing.T) {
	dir := t.TempDir()
	stale := rdv(dir, 2, 3, "earlier")
	stale.Timeout = time.Millisecond
	stale.Join(context.Background())
	r := rdv(dir, 0, 3, "c")
	r.Timeout = 60 * time.Millisecond
	start := time.Now()
	_, err := r.Join(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 of 3 nodes registered within 60ms; no node 1, 2 (its file is of crawl earlier, not c)") {
		t.Fatalf("error %v", err)
	}
	if errors.Is(err, ErrInput) {
		t.Errorf("a timeout is not bad input: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Timeout = time.Hour
	if _, err := r.Join(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestPublishAddr(t *testing.T) {
	host := func() (string, error) { return "node07", nil }
	for _, tc := range []struct{ listen, want, err string }{
		{"10.0.0.5:7400", "10.0.0.5:7400", ""},
		{"node07.cluster:7400", "node07.cluster:7400", ""},
		{":7400", "node07:7400", ""},
		{"0.0.0.0:7400", "node07:7400", ""},
		{"[::]:7400", "node07:7400", ""},
		{"127.0.0.1:0", "", "fixed port"},
		{"127.0.0.1", "", "fixed port"},
	} {
		got, err := PublishAddr(tc.listen, host)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want an error with %q", tc.listen, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.listen, got, err, tc.want)
		}
	}
}
