package fetch

import "sync"

// maxRedirectTargets bounds the redirect targets remembered at once; past
// it a new chain is not tracked (each of its hops counts from zero).
const maxRedirectTargets = 1 << 20

// Redirects remembers, for each redirect target not yet fetched, how
// many redirects led to it from the first URL of its chain, so that a
// chain (an endless /r0 -> /r1 -> ... included) can be cut after the
// crawl's --max-redirects hops. A target is forgotten when it is fetched, and
// when it will not be fetched here: the DUE knew it, robots.txt excludes
// it, or another node owns it (and starts a new count there). It is safe
// for concurrent use; the zero value is ready; a nil one forgets nothing.
type Redirects struct {
	mu   sync.Mutex
	hops map[string]int
}

// Take returns the redirects that led to u (0 for a URL not reached by a
// redirect) and forgets u.
func (c *Redirects) Take(u string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.hops[u]
	if ok {
		delete(c.hops, u)
	}
	return n
}

// Forget drops u (a target this node will not fetch).
func (c *Redirects) Forget(u string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.hops, u)
	c.mu.Unlock()
}

// Put records that u is reached after hops redirects (the most, when it
// is reached several ways). Past maxRedirectTargets targets, a new one is
// not recorded.
func (c *Redirects) Put(u string, hops int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hops == nil {
		c.hops = make(map[string]int)
	}
	if len(c.hops) < maxRedirectTargets || c.hops[u] > 0 {
		c.hops[u] = max(c.hops[u], hops)
	}
}

// Len is the number of targets remembered.
func (c *Redirects) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.hops)
}
