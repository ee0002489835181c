package frontier

// Spilling server queues to disk (a [Store]): with a memory budget
// ([Frontier.SpillTo]), a FIFO (bfs, performance) or LIFO (dfs) server queue
// keeps its head and tail in memory and its middle on disk. When the
// URLs queued in memory pass the budget, a queue that grows writes its
// middle to the store in chunks of spillChunk URLs, keeping spillKeep at
// its head, and later its tail each time that reaches spillChunk URLs.
// Popping reads the next chunk back (FIFO: the oldest; LIFO: the newest)
// when the in-memory end runs dry. The random, quality and capability
// orders need every queued URL at hand and never spill.
//
// The frontier's memory is then about the budget plus, per server with a
// spilled queue, spillKeep+spillChunk URLs and 24 bytes per chunk
// (0.1 byte per spilled URL), plus the server's own state (a few hundred
// bytes).
const (
	spillKeep  = 64
	spillChunk = 256
	// qurlBytes is a queued URL's memory besides its string bytes: its
	// slot (32 bytes) with the slice's growth slack, and the string's
	// allocation rounding.
	qurlBytes = 80
)

// Spillable reports whether queues may spill under the crawl order.
func Spillable(order string) bool {
	return order == OrderBFS || order == OrderDFS || order == OrderPerformance || order == ""
}

func qurlsBytes(xs []qurl) int64 {
	var n int64
	for i := range xs {
		n += int64(len(xs[i].url)) + qurlBytes
	}
	return n
}

// maybeSpill spills h's queue when the frontier is over its budget.
func (s *scheduler) maybeSpill(h *Host) {
	if s.store == nil || s.mem <= s.budget || s.storeErr != nil {
		return
	}
	q := &h.urls
	if len(q.chunks) == 0 {
		if q.len() < spillKeep+spillChunk {
			return
		}
		s.writeChunks(q, q.items[q.head+spillKeep:])
		keep := make([]qurl, spillKeep, 2*spillKeep)
		copy(keep, q.items[q.head:q.head+spillKeep])
		q.items, q.head = keep, 0
		return
	}
	if len(q.tail) >= spillChunk {
		s.writeChunks(q, q.tail)
		q.tail = nil
	}
}

func (s *scheduler) writeChunks(q *urlQueue, xs []qurl) {
	items := make([]Item, 0, spillChunk)
	for len(xs) > 0 {
		n := min(len(xs), spillChunk)
		items = items[:0]
		for _, x := range xs[:n] {
			items = append(items, Item{URL: x.url, Q: x.q})
		}
		c, err := s.store.Write(items)
		if err != nil {
			s.storeErr = err
			return
		}
		q.chunks = append(q.chunks, c)
		q.spilled += n
		s.mem -= qurlsBytes(xs[:n])
		xs = xs[n:]
	}
}

// readChunk reads c back as queued URLs.
func (s *scheduler) readChunk(c Chunk) []qurl {
	items, err := s.store.Take(c, nil)
	if err != nil {
		s.storeErr = err
	}
	out := make([]qurl, len(items), max(len(items), spillKeep))
	for i, it := range items {
		s.urlSeq++
		out[i] = qurl{url: it.URL, q: it.Q, seq: s.urlSeq}
	}
	s.mem += qurlsBytes(out)
	return out
}

// refillFront makes sure a FIFO queue's oldest URL is in memory.
func (s *scheduler) refillFront(q *urlQueue) {
	if len(q.items)-q.head > 0 || len(q.chunks) == 0 {
		return
	}
	c := q.chunks[0]
	q.chunks = q.chunks[1:]
	q.spilled -= int(c.Count)
	q.items, q.head = s.readChunk(c), 0
	if len(q.chunks) == 0 {
		q.items = append(q.items, q.tail...)
		q.tail = nil
	}
}

// refillBack makes sure a LIFO queue's newest URL is in memory.
func (s *scheduler) refillBack(q *urlQueue) {
	if len(q.tail) > 0 || len(q.chunks) == 0 {
		return
	}
	last := len(q.chunks) - 1
	c := q.chunks[last]
	q.chunks = q.chunks[:last]
	q.spilled -= int(c.Count)
	q.tail = s.readChunk(c)
	if len(q.chunks) == 0 {
		q.items = append(q.items[q.head:], q.tail...)
		q.head = 0
		q.tail = nil
	}
}

// eachQueued calls fn with every URL of q in queue order (oldest first),
// reading the spilled ones a chunk at a time without consuming them.
func (s *scheduler) eachQueued(q *urlQueue, fn func(u string, q float64) error) error {
	if err := eachURL(q.items[q.head:], fn); err != nil {
		return err
	}
	var items []Item
	for _, c := range q.chunks {
		var err error
		if items, err = s.store.Read(c, items[:0]); err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it.URL, it.Q); err != nil {
				return err
			}
		}
	}
	return eachURL(q.tail, fn)
}
