package recorder

import (
	"context"
	"sync"
	"time"
)

// hopGate spaces the robots.txt redirect hops a node makes to servers
// other than the one its worker holds: the frontier does not hold those
// servers for the hop, and many hosts may redirect their robots.txt to one
// (a site's subdomains to www, say). Per politeness key, one hop is in
// flight at a time and the next starts only after the delay rule
// (Config.MinDelay, DelayFactor x the hop's duration, capped at MaxDelay).
// It does not coordinate with page fetches the node's frontier makes to
// that key. It is safe for concurrent use.
type hopGate struct {
	mu   sync.Mutex
	keys map[string]*hopKey
}

type hopKey struct {
	sem  chan struct{} // holds one token while a hop to the key is in flight
	next time.Time     // earliest start of the next hop (written holding sem)
	refs int           // hops holding or waiting for the key (under hopGate.mu)
}

// hopGateLimit is how many keys the gate keeps before it forgets those
// no hop holds or waits for and whose delay has passed.
const hopGateLimit = 4096

// acquire waits until a hop to key may start; release must follow. It
// returns false when ctx is done first.
func (g *hopGate) acquire(ctx context.Context, key string) (*hopKey, bool) {
	g.mu.Lock()
	if g.keys == nil {
		g.keys = map[string]*hopKey{}
	}
	e := g.keys[key]
	if e == nil {
		if len(g.keys) >= hopGateLimit {
			now := time.Now()
			for k, x := range g.keys {
				if x.refs == 0 && !x.next.After(now) {
					delete(g.keys, k)
				}
			}
		}
		e = &hopKey{sem: make(chan struct{}, 1)}
		g.keys[key] = e
	}
	e.refs++
	g.mu.Unlock()
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		g.unref(e)
		return nil, false
	}
	if d := time.Until(e.next); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			<-e.sem
			g.unref(e)
			return nil, false
		}
	}
	return e, true
}

// release ends the hop: the next to the same key waits delay from now.
func (g *hopGate) release(e *hopKey, delay time.Duration) {
	e.next = time.Now().Add(delay)
	<-e.sem
	g.unref(e)
}

func (g *hopGate) unref(e *hopKey) {
	g.mu.Lock()
	e.refs--
	g.mu.Unlock()
}
