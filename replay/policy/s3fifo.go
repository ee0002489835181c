package policy

// S3FIFO is S3-FIFO from Yang et al., "FIFO queues are all you need for
// cache eviction" (SOSP 2023), Algorithm 1, for unit-size objects:
//
//   - a small FIFO S of k/10 keys (at least 1), a main FIFO M of the other
//     k - |S| keys, and a ghost FIFO G of 9k/10 evicted keys (as many as M
//     holds, rounded down); each cached key has a 2-bit frequency counter,
//     incremented on a hit and capped at 3;
//   - a miss whose key is in G leaves G and enters M; every other miss
//     enters S; new keys have frequency 0;
//   - to make room, evict from M if M holds more than its share or S is
//     empty, else from S (with a full cache this is the paper's "evict from
//     S if |S| >= k/10"). Evicting from S walks its tail: a key with
//     frequency >= 2 ("accessed more than once") moves to the head of M
//     with frequency 0, the first key with less is dropped into G (G's
//     oldest key leaves when G is full);
//   - evicting from M walks its tail: a key with frequency f > 0 goes back
//     to the head with f-1, the first key with 0 is evicted.
//
// This is what libCacheSim's S3FIFO.c did up to its October 2024 sources
// (commit aa0fc40: S3FIFO_insert, S3FIFO_evict_fifo, S3FIFO_evict_main,
// S3FIFO_evict), and crawltrace's miss counts equal libCacheSim's there,
// request for request (docs/benchmarks.md, "Fidelity to libCacheSim").
// Where the two differ from the paper or from each other:
//
//   - Warm-up. Later libCacheSim sources (S3FIFO.c rewritten in December
//     2024, commit 687f14c; the earlier file kept as S3FIFOv0.c) add a
//     rule to S3FIFO_insert: until the first eviction, a miss that finds S
//     already holding k/10 keys enters M instead of S. The paper has no
//     such rule (INSERT puts x in M only if x is in G), so S3FIFO does not
//     follow it. That rule alone explains libCacheSim's different S3-FIFO
//     figures at large caches, where warm-up is a large share of the
//     trace: on a 20M-request Zipf trace it lowers the miss ratio from
//     0.1023 to 0.1015 at 2^20 and from 0.29105 to 0.29092 at 2^16.
//   - Promotion when M is full. Algorithm 1 (EVICTS) calls EVICTM as soon
//     as a key moved from S finds M full, so one miss can evict two keys
//     and leave a free slot. S3FIFO, like every libCacheSim version, lets
//     M run over its share while S is walked and evicts from M on the
//     next miss instead: exactly one key leaves per miss and the cache
//     stays full. On the 20M-request Zipf trace, evicting at once as the
//     paper does changes the miss count by 65 (of 10.2M), 1 and 0 at 2^10,
//     2^16 and 2^20.
//   - Counters. libCacheSim counts hits without a cap and caps at 3 when M
//     reinserts a key (MIN(freq, 3) - 1); that is the same as the paper's
//     capped counter, since the counter is only compared with 2 (in S) and
//     1 (in M) and M caps it before decrementing.
//   - Small caches. |S| is at least 1 key; libCacheSim refuses to insert
//     an object as large as S (obj_size >= S's size), which for unit
//     objects means caches under 20 keys admit nothing. Sizes use integer
//     division where libCacheSim multiplies by 0.1 and 0.9 in floating
//     point and truncates; the two agree for every size below 2^50.
//
// It is not safe for concurrent use.
type S3FIFO struct {
	size, small, main, ghost int
	lists
}

const (
	s3Small uint8 = iota
	s3Main
	s3Ghost
)

var _ Policy = (*S3FIFO)(nil)

// s3fifoSizes returns the small, main and ghost queue sizes for k keys.
func s3fifoSizes(k int) (small, main, ghost int) {
	small = max(1, k/10)
	return small, k - small, k * 9 / 10
}

// NewS3FIFO returns an empty S3-FIFO cache of size >= 1 keys.
func NewS3FIFO(size int) *S3FIFO {
	mustSize("s3fifo", size)
	s, m, g := s3fifoSizes(size)
	return &S3FIFO{size: size, small: s, main: m, ghost: g, lists: newLists(3, size+g)}
}

// Access implements [Policy].
func (c *S3FIFO) Access(key uint64) bool {
	ghostHit := false
	if v, ok := c.t.get(key); ok {
		n := &c.s.nodes[v]
		if n.list != s3Ghost {
			if n.freq < 3 {
				n.freq++
			}
			return true
		}
		ghostHit = true
		c.s.unlink(int32(v))
		c.s.release(int32(v))
		c.t.del(key)
	}
	for c.s.lens[s3Small]+c.s.lens[s3Main] >= c.size {
		c.evict()
	}
	i := c.s.alloc(key)
	if ghostHit {
		c.s.pushFront(s3Main, i)
	} else {
		c.s.pushFront(s3Small, i)
	}
	c.t.put(key, int(i))
	return false
}

func (c *S3FIFO) evict() {
	if c.s.lens[s3Main] > c.main || c.s.lens[s3Small] == 0 {
		c.evictMain()
	} else {
		c.evictSmall()
	}
}

func (c *S3FIFO) evictSmall() {
	for c.s.lens[s3Small] > 0 {
		o := c.s.back(s3Small)
		if c.s.nodes[o].freq >= 2 {
			c.s.nodes[o].freq = 0
			c.s.moveToFront(s3Main, o)
			continue
		}
		if c.ghost == 0 {
			c.s.unlink(o)
			c.t.del(c.s.nodes[o].key)
			c.s.release(o)
			return
		}
		if c.s.lens[s3Ghost] >= c.ghost {
			g := c.s.back(s3Ghost)
			c.s.unlink(g)
			c.t.del(c.s.nodes[g].key)
			c.s.release(g)
		}
		c.s.nodes[o].freq = 0
		c.s.moveToFront(s3Ghost, o)
		return
	}
}

func (c *S3FIFO) evictMain() {
	for c.s.lens[s3Main] > 0 {
		o := c.s.back(s3Main)
		if f := c.s.nodes[o].freq; f > 0 {
			c.s.nodes[o].freq = f - 1
			c.s.moveToFront(s3Main, o)
			continue
		}
		c.s.unlink(o)
		c.t.del(c.s.nodes[o].key)
		c.s.release(o)
		return
	}
}

// Name implements [Policy].
func (c *S3FIFO) Name() string { return "s3fifo" }

// Len implements [Policy].
func (c *S3FIFO) Len() int { return c.s.lens[s3Small] + c.s.lens[s3Main] }
