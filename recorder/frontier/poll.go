package frontier

import "time"

// Poll is [Frontier.Next] without waiting, for a driver that runs the
// workers itself on a virtual clock (Options.Now): the task of a host
// that may be fetched now, held as Next holds it, or ok false. Then wait
// is how long until the earliest waiting host is due (negative: none is
// waiting), and gen is a number that changes whenever a host may have
// become ready other than by time passing (a URL or hop added, a host
// released, robots.txt rules stored, a connection slot freed): a driver
// that polled in vain need not poll again before the wait has passed or
// gen has changed. A closed frontier gives no task.
func (f *Frontier) Poll() (t Task, ok bool, wait time.Duration, gen uint64) {
	var acquire func() bool
	if f.slots != nil {
		acquire = f.slots.tryAcquire
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return Task{}, false, -1, f.gen()
	}
	t, ok, wait, _, freed := f.pickLocked(f.now(), acquire)
	f.mu.Unlock()
	f.freeSlots(freed)
	return t, ok, wait, f.gen()
}

// Gen is the number Poll returns as gen, now.
func (f *Frontier) Gen() uint64 { return f.gen() }

// gen is the broadcasts so far plus the connection slots freed.
func (f *Frontier) gen() uint64 {
	f.mu.Lock()
	g := f.wakes
	f.mu.Unlock()
	if f.slots != nil {
		g += f.slots.releases()
	}
	return g
}
