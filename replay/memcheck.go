package replay

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/replay/policy"
)

// The memory check. Before its first run, [Run] estimates the peak memory
// of the sweep and refuses to start one that cannot fit (Config.Memory):
// the traces are replayed in turn, so the peak is that of the costliest
// trace, which is
//
//   - the trace in memory when min runs, or static per size: 8 bytes per
//     request, plus, for min, its next-use times (4 bytes per request in
//     one pass, 8 per size);
//   - the simulations running at once (Config.Workers, the costliest of
//     them counted), or, while min's next-use times are computed, the hash
//     table that computes them (two slots per distinct key, see
//     policy.MemoryPerEntry) and the others running then; each
//     simulation's structures as policy.MemoryPerEntry gives
//     them at min(size, distinct keys), since a cache holds no more keys
//     than the trace has; a one-pass curve at its largest size; static
//     also counts and sorts the distinct keys (in one pass, that and the
//     table of them is all it holds, see [StaticCurve]);
//   - baseBytes for the program itself.
//
// Structures are counted at growth times their size when full: a hash
// table or slab grows by doubling, and holds its old and new arrays at
// once while it does. The garbage they leave is collected in time because
// Run sets Go's soft memory limit a little above the estimate (see
// plan.checkMemory; unless GOMEMLIMIT is set): as the heap nears it,
// the collector runs more often. Without that limit a heap may grow to
// twice its live data before a collection.
//
// The memory-mapped trace file is not counted: its pages are the kernel's
// page cache, dropped under pressure. The distinct keys are bounded first
// by the requests; only when that bound does not fit does a first pass
// over the trace count them ([distinctKeys], a HyperLogLog sketch, 2% added
// for its error). Sampled runs scale requests and keys by the rate
// (SHARDS_adj: the sample holds about that share).

// baseBytes is the memory of the program besides the simulations: the
// runtime, the binary's data, buffers.
const baseBytes = 32 << 20

// growth is the peak of a structure growing by doubling, relative to its
// final size.
const growth = 1.5

// memNeed is an estimate of a sweep's peak memory on one trace, by part.
type memNeed struct {
	trace string
	parts []memPart
}

type memPart struct {
	what  string
	bytes int64
}

func (m memNeed) total() int64 {
	var t int64
	for _, p := range m.parts {
		t += p.bytes
	}
	return t
}

func (m *memNeed) add(what string, b int64) {
	if b > 0 {
		m.parts = append(m.parts, memPart{what, b})
	}
}

// String gives the total and the largest parts.
func (m memNeed) String() string {
	ps := slices.Clone(m.parts)
	slices.SortStableFunc(ps, func(a, b memPart) int { return int(b.bytes>>20) - int(a.bytes>>20) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s of memory (", FormatBytes(m.total()))
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", p.what, FormatBytes(p.bytes))
	}
	b.WriteString(")")
	return b.String()
}

// FormatBytes writes a byte count in binary units: 512 B, 3.4 MiB, 16.0 GiB.
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, i := float64(b), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}

// ParseBytes reads a memory size: a number with an optional unit K, M, G
// or T (powers of 1024; KiB, MB, GiB and the like are read the same), e.g.
// 20G, 1.5GiB, 512M, 1048576.
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			shift, t = 10*(i+1), t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("memory size %q: want a number with an optional unit K, M, G or T, e.g. 20G", s)
	}
	b := math.Ldexp(v, shift)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("memory size %q is too large", s)
	}
	return int64(b), nil
}

// tableBytes is the hash table of n keys (see policy.MemoryPerEntry).
func tableBytes(n int64) int64 {
	if n < 1 {
		return 0
	}
	return int64(policy.MemoryPerEntry("static", int(n)) * float64(n))
}

// structBytes is policy's structures holding k keys.
func structBytes(name string, k int64) int64 {
	if k < 1 {
		return 0
	}
	return int64(policy.MemoryPerEntry(name, int(k)) * float64(k))
}

// estimateTrace is the estimate of units' peak memory on a trace of n
// requests and d distinct keys (before sampling).
func (p *plan) estimateTrace(trace string, units []unit, n, d int64) memNeed {
	need := memNeed{trace: trace}
	need.add("program", baseBytes)
	rate := 1.0
	if p.sampled {
		if p.sample > 0 && p.sample < 1 {
			rate = p.sample
		}
		if p.sampleMaxKeys > 0 && d > 0 {
			rate = min(rate, float64(p.sampleMaxKeys)/float64(d))
		}
	}
	ns := int64(math.Ceil(float64(n) * rate))
	ds := min(int64(math.Ceil(float64(d)*rate)), ns)
	// k: the keys a cache of nominal size s can hold.
	k := func(s int) int64 {
		if rate < 1 {
			s = max(1, int(math.Round(1+float64(s-1)*rate)))
		}
		return min(int64(s), ds)
	}
	if p.sampled && 8*ns <= sampleHold {
		need.add("sample in memory", 8*ns)
	}
	maxSize := slices.Max(p.sizes)
	offline, withNext := false, false
	var sims []int64
	var simNames []string
	for _, u := range units {
		var b int64
		switch {
		case u.size == 0 && p.shards(u.policy):
			// SHARDS: an LRU stack and the sample's lowest hashes.
			b = 160 * int64(p.sampleMaxKeys)
		case u.policy == "lru" && u.size == 0:
			b = tableBytes(k(maxSize)) + markerBytesPerKey*k(maxSize) // the time line
		case u.policy == "min" && u.size == 0:
			offline, withNext = true, true
			b = structBytes("min", k(maxSize))
		case u.policy == "infinite":
			b = tableBytes(ds)
		case u.policy == "static" && u.size == 0:
			// StaticCurve streams: a table of the distinct keys, their
			// counts, their counts in the warmup (at most) and the ranking.
			b = tableBytes(ds) + 24*ds
		case u.policy == "static":
			offline = true
			b = tableBytes(ds) + 40*ds + structBytes("static", k(u.size)) // counts, order
		default:
			if u.policy == "min" {
				offline, withNext = true, true
			}
			b = structBytes(u.policy, k(u.size))
		}
		sims = append(sims, b)
		simNames = append(simNames, u.policy)
	}
	if offline {
		need.add("trace in memory", 8*ns)
	}
	var table int64
	if withNext {
		per := int64(8)
		if p.onePass["min"] {
			per = 4 // 32-bit positions
		}
		need.add("next-use times", per*ns)
		table = int64(growth * float64(tableBytes(ds)))
	}
	// The costliest Workers simulations at once; while the next-use times
	// are computed (the table is dropped then), the costliest Workers-1
	// others.
	order := make([]int, len(sims))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case sims[a] > sims[b]:
			return -1
		case sims[a] < sims[b]:
			return 1
		}
		return 0
	})
	w := min(p.workers, len(order))
	top := func(w int) (int64, string) {
		var at int64
		var names []string
		for _, i := range order[:w] {
			at += sims[i]
			if !slices.Contains(names, simNames[i]) {
				names = append(names, simNames[i])
			}
		}
		what := "simulation " + strings.Join(names, ", ")
		if w > 1 {
			what = fmt.Sprintf("%d simulations at once (%s)", w, strings.Join(names, ", "))
		}
		return int64(growth * float64(at)), what
	}
	all, what := top(w)
	others, otherWhat := top(max(w-1, 0))
	if table > 0 && table+others > all {
		need.add("next-use table", table)
		need.add(otherWhat, others)
	} else {
		need.add(what, all)
	}
	return need
}

// checkMemory refuses a sweep whose estimated peak exceeds what the machine
// has, or memory bytes when memory > 0 (Config.Memory; < 0 skips the
// check): it returns a one-line error naming the trace, the memory needed
// and by what, and the memory available. It estimates the plan's units (of
// this task) from the traces' lengths (p.lens) and counts distinct keys in
// a first pass only where the requests' bound does not fit.
//
// It returns the memory the run should stay within, 0 when there is no
// check: a quarter (at least 256 MiB) above the estimate, or the memory
// allowed if that is less. Run sets Go's soft memory limit to it, so that
// the collector reclaims the garbage of growing structures before the heap
// goes far past what the estimate counts, rather than only when it has
// doubled.
func (p *plan) checkMemory(ctx context.Context, memory int64) (int64, error) {
	if memory < 0 {
		return 0, nil
	}
	avail, source := memory, "given by --memory"
	if avail == 0 {
		avail, source = procmem.Available(), "available (MemAvailable)"
		if avail <= 0 {
			return 0, nil // no way to tell: not Linux
		}
	}
	var peak int64 // the largest estimate
	for ti, path := range p.traces {
		us := p.unitsOf(ti)
		if len(us) == 0 {
			continue
		}
		n := p.lens[ti]
		if n < 0 {
			// Text: at least two bytes a request (a character and a newline).
			st, err := os.Stat(path)
			if err != nil {
				continue // Run reports it
			}
			n = st.Size()/2 + 1
		}
		need := p.estimateTrace(filepath.Base(path), us, n, n)
		if need.total() <= avail {
			peak = max(peak, need.total())
			continue
		}
		// The requests bound the distinct keys too loosely: count them.
		reqs, d, err := distinctKeys(ctx, path, p.format)
		if err != nil {
			return 0, err
		}
		need = p.estimateTrace(filepath.Base(path), us, reqs, min(reqs, d+d/50))
		if need.total() > avail {
			return 0, fmt.Errorf("replay: %s: this run needs about %s, more than the %s %s; run fewer policies or sizes at once (--policies, --sizes, --workers, --task), or sample (--sample); --memory off skips this check",
				need.trace, need, FormatBytes(avail), source)
		}
		peak = max(peak, need.total())
	}
	return min(avail, max(peak+peak/4, peak+256<<20)), nil
}

// limitMemory sets Go's soft memory limit to limit bytes (0: none) unless
// one is set already (GOMEMLIMIT), and returns what restores it.
func limitMemory(limit int64) func() {
	if limit <= 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(prev) }
}

// hllBits is log2 of the registers of distinctKeys' sketch: 16384
// registers, a standard error of 1.04/128 = 0.8%.
const hllBits = 14

// distinctKeys reads the trace at path once and returns its requests and an
// estimate of its distinct keys (HyperLogLog, Flajolet et al. 2007, with
// linear counting for small counts), in constant memory.
func distinctKeys(ctx context.Context, path, format string) (reqs, distinct int64, err error) {
	src, err := Open(path, format)
	if err != nil {
		return 0, 0, err
	}
	defer src.Close()
	const m = 1 << hllBits
	var reg [m]uint8
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		keys := src.Keys()
		reqs += int64(len(keys))
		for _, k := range keys {
			h := sampleHash(k)
			i := h >> (64 - hllBits)
			r := uint8(bits.LeadingZeros64(h<<hllBits|1<<(hllBits-1)) + 1)
			if r > reg[i] {
				reg[i] = r
			}
		}
	}
	if err := src.Err(); err != nil {
		return 0, 0, err
	}
	var sum float64
	zeros := 0
	for _, r := range reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	e := alpha * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(float64(m)/float64(zeros))
	}
	return reqs, min(int64(math.Round(e)), reqs), nil
}
