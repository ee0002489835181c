package fetch

import (
	"strconv"
	"sync"
	"testing"
)

// TestRedirects: a target keeps the most hops it was reached with until
// it is taken or forgotten; a nil table forgets nothing and holds nothing;
// past the bound a new target is not remembered, a known one still is.
func TestRedirects(t *testing.T) {
	var c Redirects
	if got := c.Take("http://a.test/"); got != 0 {
		t.Errorf("a URL no redirect led to: %d hops", got)
	}
	c.Put("http://a.test/1", 2)
	c.Put("http://a.test/1", 1)
	c.Put("http://a.test/2", 1)
	if c.Len() != 2 {
		t.Errorf("%d targets, want 2", c.Len())
	}
	if got := c.Take("http://a.test/1"); got != 2 {
		t.Errorf("took %d hops, want the most, 2", got)
	}
	if got := c.Take("http://a.test/1"); got != 0 {
		t.Errorf("taken twice: %d hops", got)
	}
	c.Forget("http://a.test/2")
	if c.Len() != 0 {
		t.Errorf("%d targets after forgetting them all", c.Len())
	}
	var nilc *Redirects
	nilc.Forget("http://a.test/")
	if nilc.Len() != 0 {
		t.Error("a nil table holds targets")
	}

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < maxRedirectTargets; i += 4 {
				c.Put("http://b.test/"+strconv.Itoa(i), 1)
			}
		})
	}
	wg.Wait()
	c.Put("http://b.test/new", 1)
	c.Put("http://b.test/0", 3)
	if c.Len() != maxRedirectTargets {
		t.Errorf("%d targets, want the bound %d", c.Len(), maxRedirectTargets)
	}
	if got := c.Take("http://b.test/new"); got != 0 {
		t.Errorf("a target past the bound remembered with %d hops", got)
	}
	if got := c.Take("http://b.test/0"); got != 3 {
		t.Errorf("a known target at the bound: %d hops, want 3", got)
	}
}
