package policy

// growStart is the capacity a policy's arrays start with (or its size, if
// smaller). They double as keys arrive, up to the size, so a cache's memory
// follows the keys it holds and never its nominal size: a 2^25-entry cache
// over a trace of 139K distinct keys costs what 139K entries cost.
const growStart = 256

// grow returns s with length n (n <= limit), reallocating when n exceeds its
// capacity: the new capacity doubles the old one, is at least growStart,
// and is capped at limit, so a full structure has exactly limit elements.
func grow[T any](s []T, n, limit int) []T {
	if n <= cap(s) {
		return s[:max(n, len(s))]
	}
	c := min(max(2*cap(s), n, growStart), limit)
	t := make([]T, n, c)
	copy(t, s)
	return t
}

// startCap is the initial capacity of an array that will hold up to limit
// elements.
func startCap(limit int) int { return min(limit, growStart) }
