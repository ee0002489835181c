package policy

// slab is a fixed pool of doubly linked nodes threaded onto a few circular
// lists. List l (0 <= l < nlists) has its sentinel at index l; the front
// of a list is the sentinel's next (most recent), the back its prev
// (oldest). Links are int32 indices, so the node array can grow (it
// doubles as nodes are handed out, up to its capacity) without
// invalidating a link, and nothing is allocated per access once it has
// reached the number of keys the cache holds.
//
// A slab is not safe for concurrent use.
type slab struct {
	nodes []snode
	limit int // nodes never grows past this many
	lens  [4]int
	used  int32 // nodes[:used] have been handed out at least once
	free  int32 // head of the free list (threaded through next), -1 if none
}

// snode is one node: 24 bytes (8 key, 4+4 links, 1 list, 1 freq, padding).
type snode struct {
	key        uint64
	prev, next int32
	list       uint8
	freq       uint8
}

// slabBytes is the memory of a full slab with nlists lists and capacity nodes.
func slabBytes(nlists, capacity int) int { return (nlists + capacity) * 24 }

func newSlab(nlists, capacity int) slab {
	s := slab{nodes: make([]snode, nlists, nlists+startCap(capacity)), limit: nlists + capacity, used: int32(nlists), free: -1}
	for l := 0; l < nlists; l++ {
		s.nodes[l] = snode{prev: int32(l), next: int32(l), list: uint8(l)}
	}
	return s
}

// alloc returns a fresh unlinked node holding key.
func (s *slab) alloc(key uint64) int32 {
	var i int32
	if s.free >= 0 {
		i = s.free
		s.free = s.nodes[i].next
	} else {
		i = s.used
		s.used++
		if int(i) >= len(s.nodes) {
			s.nodes = grow(s.nodes, int(i)+1, s.limit)
		}
	}
	s.nodes[i] = snode{key: key}
	return i
}

// release returns an unlinked node to the pool.
func (s *slab) release(i int32) {
	s.nodes[i].next = s.free
	s.free = i
}

// pushFront links node i at the front of list l.
func (s *slab) pushFront(l uint8, i int32) {
	n := s.nodes
	h := int32(l)
	f := n[h].next
	n[i].prev, n[i].next, n[i].list = h, f, l
	n[f].prev = i
	n[h].next = i
	s.lens[l]++
}

// unlink removes node i from its list.
func (s *slab) unlink(i int32) {
	n := s.nodes
	p, x := n[i].prev, n[i].next
	n[p].next = x
	n[x].prev = p
	s.lens[n[i].list]--
}

// moveToFront moves node i to the front of list l.
func (s *slab) moveToFront(l uint8, i int32) {
	s.unlink(i)
	s.pushFront(l, i)
}

// back returns the oldest node of list l, or -1 if it is empty.
func (s *slab) back(l uint8) int32 {
	if s.lens[l] == 0 {
		return -1
	}
	return s.nodes[l].prev
}

func (s *slab) bytes() int { return cap(s.nodes) * 24 }
