// Package bytebudget bounds the bytes held by messages waiting between
// producers and a consumer: a producer takes the bytes of a message
// before handing it over and the consumer gives them back once done, so a
// flood of work slows the producers (back-pressure) instead of growing
// memory. The recorder's host splitter queue and its peer batch endpoint
// each hold one.
package bytebudget

import "sync"

// Budget bounds the bytes of URL messages waiting between the fetch
// workers and the host splitter: a worker takes the bytes of a message
// before sending it and the splitter gives them back once the message is
// logged, so a flood of links slows fetching (back-pressure) instead of
// growing memory. A message larger than the whole budget waits until the
// queue is empty and then goes alone. A nil *Budget bounds nothing. It is
// safe for concurrent use.
type Budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int64
	used int64
	peak int64
	// waits counts acquisitions that had to wait.
	waits int64
}

// New returns a budget of max bytes.
func New(max int64) *Budget {
	b := &Budget{max: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// Acquire takes n bytes, waiting while they do not fit.
func (b *Budget) Acquire(n int64) {
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

// TryAcquire takes n bytes if they fit now (or nothing else is held) and
// reports whether it did; it never waits.
func (b *Budget) TryAcquire(n int64) bool {
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

// Release gives n bytes back.
func (b *Budget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// Stats returns the most bytes held at once and the number of
// acquisitions that had to wait.
func (b *Budget) Stats() (peak, waits int64) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak, b.waits
}
