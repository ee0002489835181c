package frontier

import "sync"

// ConnSlots caps the connections open at once over the nodes of a crawl:
// a session takes a slot when it opens and frees it when it ends. It is
// safe for concurrent use.
type ConnSlots struct {
	mu        sync.Mutex
	max, open int
	peak      int
	freedN    uint64        // slots freed so far
	ch        chan struct{} // closed (and replaced) when a slot is freed
}

// NewConnSlots makes a cap of max connections.
func NewConnSlots(max int) *ConnSlots {
	return &ConnSlots{max: max, ch: make(chan struct{})}
}

func (c *ConnSlots) tryAcquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open >= c.max {
		return false
	}
	c.open++
	c.peak = max(c.peak, c.open)
	return true
}

func (c *ConnSlots) release() {
	c.mu.Lock()
	c.open--
	c.freedN++
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

// releases is the number of slots freed so far.
func (c *ConnSlots) releases() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.freedN
}

// freed returns a channel closed at the next release.
func (c *ConnSlots) freed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// PeakOpen is the most slots ever taken at once.
func (c *ConnSlots) PeakOpen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// Max is the cap.
func (c *ConnSlots) Max() int { return c.max }
