package replay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// GenConfig describes a synthetic trace for [Generate].
type GenConfig struct {
	// Requests is the number of requests to generate.
	Requests int64
	// Keys is the number of distinct keys in the popularity distribution.
	Keys int
	// Alpha is the Zipf exponent: key of rank r (1-based) has probability
	// proportional to r^-Alpha. 0 is uniform; any Alpha >= 0 is exact (the
	// sampler inverts a precomputed CDF by binary search, 8 bytes per key).
	Alpha float64
	// Locality in [0, 1] is the probability that a request re-uses a key
	// chosen uniformly from the last Window requests instead of drawing from
	// the Zipf distribution. It models the paper's host locality: the pages
	// of one host, crawled close together, share many links.
	Locality float64
	// Window is the number of recent requests Locality draws from.
	Window int
	// Seed makes the trace reproducible: equal configs give equal traces.
	Seed uint64
}

// DefaultGenConfig returns a small web-like trace: 1M requests over 100K
// keys, Zipf 0.9, locality 0.3 over the last 64 requests.
func DefaultGenConfig() GenConfig {
	return GenConfig{Requests: 1 << 20, Keys: 100_000, Alpha: 0.9, Locality: 0.3, Window: 64, Seed: 1}
}

func (c GenConfig) validate() error {
	switch {
	case c.Requests < 0:
		return fmt.Errorf("%w: replay: gen-trace: requests %d < 0", tracefile.ErrBadInput, c.Requests)
	case c.Keys < 1:
		return fmt.Errorf("%w: replay: gen-trace: keys %d < 1", tracefile.ErrBadInput, c.Keys)
	case !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("%w: replay: gen-trace: alpha %v is not a finite number >= 0", tracefile.ErrBadInput, c.Alpha)
	case !(c.Locality >= 0 && c.Locality <= 1):
		return fmt.Errorf("%w: replay: gen-trace: locality %v is not in [0, 1]", tracefile.ErrBadInput, c.Locality)
	case c.Window < 1:
		return fmt.Errorf("%w: replay: gen-trace: window %d < 1", tracefile.ErrBadInput, c.Window)
	}
	return nil
}

// ScrambleKey maps a popularity rank (0-based) to a key that looks like a
// fingerprint: the splitmix64 finalizer, a bijection on uint64, so distinct
// ranks give distinct keys.
func ScrambleKey(rank uint64) uint64 {
	z := rank + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// zipf samples ranks 0..n-1 with P(r) proportional to (r+1)^-alpha.
type zipf struct{ cdf []float64 }

func newZipf(n int, alpha float64) zipf {
	cdf := make([]float64, n)
	var sum float64
	for r := range cdf {
		sum += math.Pow(float64(r+1), -alpha)
		cdf[r] = sum
	}
	for r := range cdf {
		cdf[r] /= sum
	}
	cdf[n-1] = 1
	return zipf{cdf}
}

// rank returns the smallest r with cdf[r] > u, for u in [0, 1).
func (z zipf) rank(u float64) int {
	return sort.Search(len(z.cdf)-1, func(i int) bool { return z.cdf[i] > u })
}

// Generate produces cfg's trace and hands it to emit in batches (the slice
// is reused after emit returns). It stops at emit's first error.
func Generate(cfg GenConfig, emit func(batch []uint64) error) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	rng := rand.NewPCG(cfg.Seed, cfg.Seed^0xda3e39cb94b95bdb)
	unit := func() float64 { return float64(rng.Uint64()>>11) * 0x1p-53 }
	z := newZipf(cfg.Keys, cfg.Alpha)
	recent := make([]uint64, cfg.Window)
	filled := 0
	batch := make([]uint64, 0, batchSize)
	for i := int64(0); i < cfg.Requests; i++ {
		var k uint64
		if filled > 0 && unit() < cfg.Locality {
			k = recent[rng.Uint64()%uint64(filled)]
		} else {
			k = ScrambleKey(uint64(z.rank(unit())))
		}
		recent[i%int64(cfg.Window)] = k
		filled = min(filled+1, cfg.Window)
		batch = append(batch, k)
		if len(batch) == cap(batch) {
			if err := emit(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		return emit(batch)
	}
	return nil
}

// GenerateKeys returns cfg's trace in memory.
func GenerateKeys(cfg GenConfig) ([]uint64, error) {
	out := make([]uint64, 0, max(cfg.Requests, 0))
	err := Generate(cfg, func(b []uint64) error { out = append(out, b...); return nil })
	return out, err
}

// GenerateFile writes cfg's trace to path as a condensed trace (streaming,
// so any length fits). Its metadata names it a single-node full subtrace of
// crawl "synthetic".
func GenerateFile(path string, cfg GenConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	w, err := tracefile.CreateCondensed(path, tracefile.Meta{
		CrawlID: fmt.Sprintf("synthetic requests=%d keys=%d alpha=%g locality=%g window=%d seed=%d",
			cfg.Requests, cfg.Keys, cfg.Alpha, cfg.Locality, cfg.Window, cfg.Seed),
		Nodes: 1, Partitioner: "synthetic", Subtrace: tracefile.SubtraceFull,
	})
	if err != nil {
		return err
	}
	if err := Generate(cfg, w.AppendSlice); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
