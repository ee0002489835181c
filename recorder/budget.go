package recorder

import "sync"

// byteBudget bounds the bytes of URL messages waiting between the fetch
// workers and the host splitter: a worker takes the bytes of a message
// before sending it and the splitter gives them back once the message is
// logged, so a flood of links slows fetching (back-pressure) instead of
// growing memory. A message larger than the whole budget waits until the
// queue is empty and then goes alone. It is safe for concurrent use.
type byteBudget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int64
	used int64
	peak int64
	// waits counts acquisitions that had to wait.
	waits int64
}

func newByteBudget(max int64) *byteBudget {
	b := &byteBudget{max: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n bytes, waiting while they do not fit.
func (b *byteBudget) acquire(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	waited := false
	for b.used > 0 && b.used+n > b.max {
		waited = true
		b.cond.Wait()
	}
	if waited {
		b.waits++
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	b.mu.Unlock()
}

// tryAcquire takes n bytes if they fit now (or nothing else is held) and
// reports whether it did; it never waits.
func (b *byteBudget) tryAcquire(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used > 0 && b.used+n > b.max {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// release gives n bytes back.
func (b *byteBudget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *byteBudget) stats() (peak, waits int64) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak, b.waits
}

// splitURLOverhead is the memory of one queued URL besides its strings:
// the splitURL value (three string headers) and slice slack.
const splitURLOverhead = 64

// urlBytes is the memory a slice of URLs holds while queued.
func urlBytes(us []splitURL) int64 {
	var n int64
	for i := range us {
		n += int64(len(us[i].URL)+len(us[i].Tag)) + splitURLOverhead
	}
	return n
}
