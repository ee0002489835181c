package frontier

// qurl is one queued URL with its quality (0 without an oracle) and its
// arrival number, which breaks quality ties first come, first served.
type qurl struct {
	url string
	q   float64
	seq uint64
}

// urlQueue is one server's queue of URLs. In FIFO use, items[head:] are
// queued in arrival order; with byQuality, items is a binary max-heap by
// quality, then arrival. It is not safe for concurrent use.
type urlQueue struct {
	items     []qurl
	head      int
	byQuality bool
	scratch   []int // topSum's candidate heap, kept between calls
	// A FIFO or LIFO queue may have its middle on disk (see spill):
	// items[head:] is the head, chunks (oldest first, spilled URLs in
	// all) the middle, tail the newest URLs.
	chunks  []Chunk
	spilled int
	tail    []qurl
}

// eachURL calls fn with the URL and quality of every entry of xs, in
// order, and stops at fn's first error.
func eachURL(xs []qurl, fn func(u string, q float64) error) error {
	for _, x := range xs {
		if err := fn(x.url, x.q); err != nil {
			return err
		}
	}
	return nil
}

func (q *urlQueue) len() int { return len(q.items) - q.head + q.spilled + len(q.tail) }

func (q *urlQueue) push(x qurl) {
	if len(q.chunks) > 0 {
		q.tail = append(q.tail, x)
		return
	}
	q.items = append(q.items, x)
	if q.byQuality {
		q.up(len(q.items) - 1)
	}
}

// popFront removes the oldest URL (FIFO).
func (q *urlQueue) popFront() qurl {
	x := q.items[q.head]
	q.items[q.head] = qurl{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head >= 1024 && q.head*2 >= len(q.items) {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
	return x
}

// popBack removes the newest URL (LIFO).
func (q *urlQueue) popBack() qurl {
	if n := len(q.tail); n > 0 {
		x := q.tail[n-1]
		q.tail[n-1] = qurl{}
		q.tail = q.tail[:n-1]
		return x
	}
	last := len(q.items) - 1
	x := q.items[last]
	q.items[last] = qurl{}
	q.items = q.items[:last]
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return x
}

// popAt removes the i-th queued URL (0 is the oldest), moving the newest
// into its place.
func (q *urlQueue) popAt(i int) qurl {
	i += q.head
	x := q.items[i]
	last := len(q.items) - 1
	q.items[i] = q.items[last]
	q.items[last] = qurl{}
	q.items = q.items[:last]
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return x
}

// popBest removes the URL of highest quality (byQuality only).
func (q *urlQueue) popBest() qurl {
	x := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items[last] = qurl{}
	q.items = q.items[:last]
	if last > 0 {
		q.down(0)
	}
	return x
}

// best is the highest queued quality (byQuality only; 0 when empty).
func (q *urlQueue) best() float64 {
	if len(q.items) == 0 {
		return 0
	}
	return q.items[0].q
}

// topSum is the summed quality of the k best queued URLs (byQuality
// only), found by a best-first walk of the heap in O(k log k).
func (q *urlQueue) topSum(k int) float64 {
	n := len(q.items)
	if k >= n {
		var s float64
		for i := range q.items {
			s += q.items[i].q
		}
		return s
	}
	if k <= 0 {
		return 0
	}
	// cand is a max-heap of item indices whose parents were taken.
	cand := append(q.scratch[:0], 0)
	var s float64
	for taken := 0; taken < k; taken++ {
		i := cand[0]
		s += q.items[i].q
		last := len(cand) - 1
		cand[0] = cand[last]
		cand = cand[:last]
		q.candDown(cand, 0)
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < n {
				cand = append(cand, c)
				q.candUp(cand, len(cand)-1)
			}
		}
	}
	q.scratch = cand
	return s
}

func (q *urlQueue) before(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.q != b.q {
		return a.q > b.q
	}
	return a.seq < b.seq
}

func (q *urlQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.before(i, p) {
			return
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *urlQueue) down(i int) {
	n := len(q.items)
	for {
		b := i
		if l := 2*i + 1; l < n && q.before(l, b) {
			b = l
		}
		if r := 2*i + 2; r < n && q.before(r, b) {
			b = r
		}
		if b == i {
			return
		}
		q.items[i], q.items[b] = q.items[b], q.items[i]
		i = b
	}
}

func (q *urlQueue) candUp(c []int, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.before(c[i], c[p]) {
			return
		}
		c[i], c[p] = c[p], c[i]
		i = p
	}
}

func (q *urlQueue) candDown(c []int, i int) {
	n := len(c)
	for {
		b := i
		if l := 2*i + 1; l < n && q.before(c[l], c[b]) {
			b = l
		}
		if r := 2*i + 2; r < n && q.before(c[r], c[b]) {
			b = r
		}
		if b == i {
			return
		}
		c[i], c[b] = c[b], c[i]
		i = b
	}
}
