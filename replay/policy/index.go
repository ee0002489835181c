package policy

// Index is the open-addressing table from uint64 keys to non-negative ints
// that the policies use, exported for the replay engine's one-pass curves.
// It grows as keys arrive, up to the capacity it was made for. It is not
// safe for concurrent use.
type Index struct{ t table }

// NewIndex returns an empty index sized to hold up to capacity keys without
// resizing once full (it starts small and doubles as keys arrive).
func NewIndex(capacity int) *Index { return &Index{t: newTable(capacity)} }

// Get returns the value stored for k.
func (x *Index) Get(k uint64) (int, bool) { return x.t.get(k) }

// Put stores v (>= 0) for k, replacing any previous value.
func (x *Index) Put(k uint64, v int) { x.t.put(k, v) }

// Delete removes k and reports whether it was present.
func (x *Index) Delete(k uint64) bool { return x.t.del(k) }

// Len is the number of keys held.
func (x *Index) Len() int { return x.t.len() }
