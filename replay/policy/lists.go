package policy

// lists is the slab of linked lists, with a table from key to node, that
// ARC, 2Q, S3FIFO, SIEVE and W-TinyLFU share: they differ only in their
// lists and in how keys move between them. Each policy adds and removes
// keys in its own Access, where the slab's and table's small methods are
// inlined (an insert method here is not, nor is drop: calling them cost
// ARC, S3FIFO and SIEVE 8-10% of their requests per CPU second at 2^10
// keys). Not safe for concurrent use.
type lists struct {
	t table
	s slab
}

// newLists returns nlists empty lists holding up to capacity keys in all.
func newLists(nlists, capacity int) lists {
	return lists{t: newTable(capacity), s: newSlab(nlists, capacity)}
}

// drop removes node i and its key, for ARC, 2Q and W-TinyLFU, which
// called a method of their own for it.
func (c *lists) drop(i int32) {
	c.s.unlink(i)
	c.t.del(c.s.nodes[i].key)
	c.s.release(i)
}

func (c *lists) memBytes() int { return c.t.bytes() + c.s.bytes() }
