// Package replay replays URL-fingerprint traces through cache policies, as
// Broder, Najork and Wiener did for their crawler's host splitter, and
// writes miss-rate curves, tables and figures.
//
// # Inputs
//
// A [Source] streams a trace's keys in batches. [Open] reads three formats:
// crawltrace's condensed traces (Arrow IPC files, mapped zero-copy through
// tracefile), libCacheSim's oracleGeneral binary traces, and text (one key
// per line: decimal, 0x-hex, or any other string hashed with xxHash64; see
// [FormatText]). A malformed file gives an error wrapping
// tracefile.ErrCorrupt that names the file and the offset or line.
// [ExportFile] converts between them; [GenerateFile] writes synthetic Zipf
// traces with a host-locality knob.
//
// # One pass for all sizes
//
// LRU and MIN are stack algorithms, so one pass gives their exact hit
// counts at every cache size. [Run] uses the marker forms, which count hits
// only at the sizes asked for: [LRUMarkers] for LRU (streaming) and
// [MINMarkers] for MIN (on the trace in memory). [LRUStack] computes every
// LRU stack distance with a Fenwick tree over access times (O(log n) per
// request, streaming, memory proportional to the distinct keys), and
// [MINCurve] runs the MIN (OPT) stack update in an implicit treap. The
// tests check LRUStack and MINCurve against per-size simulations, and
// LRUMarkers against LRUStack and MINMarkers against MINCurve; nothing is
// cross-checked at run time.
//
// STATIC is not a stack algorithm in that sense (it never evicts), but its
// caches are nested too: the size-k cache holds the k keys most requested
// over the whole trace. [StaticCurve] counts every key's requests in one
// streaming pass and ranks them once, and each size's hits are a prefix
// sum over the ranking; the tests check it against policy.Static run at
// every size.
//
// # Sweeps
//
// [Run] replays every trace of a [Config] through every policy at every
// size: lru, min, static and infinite in one pass each (lru, min and
// static from 4 sizes on, see Config.Algorithm), the other policies
// (package replay/policy) one simulation per size in parallel. A sweep can be cut
// into N slices (Config.Task, Config.Tasks) for a Slurm job array or a
// Kubernetes indexed job, and [Merge] joins the slices. Run first
// resolves the Config once into a plan (plan.go: the checked parameters,
// this slice's units of the grid, the sampling decision, the traces'
// lengths and the memory check); the runs read the plan. Results go to
// results.csv and results.arrow (columns trace, policy, size, requests,
// hits, misses, miss_rate, relative_to_min, seconds, seeds, miss_rate_std,
// sample_rate),
// memory.csv (bytes per cached entry: computed for a full cache, and
// measured at the end of each simulation run at one size), and the figures
// of [WritePlots].
//
// # Memory
//
// lru, infinite, static in one pass and the online policies stream the
// trace. min, and static run per size, hold the trace in memory (8 bytes
// per request), min also its next-use times (4 more bytes per request in
// one pass, 8 per size); a sweep loads each trace once, for those policies
// only, and drops it before the next trace.
//
// A sweep's peak memory is that of the simulations running at once
// (Config.Workers) plus the trace: a finished simulation leaves only its
// row. A cache's structures grow with the keys it holds, never to its
// nominal size (W-TinyLFU's sketch, 2 bytes per nominal entry, excepted),
// so a 2^25-entry cache over 50K distinct keys costs what 50K entries
// cost. They used to be allocated at the nominal size; Go's heap reuses a
// finished simulation's spans only after zeroing them, which touched every
// page of every nominal size in turn, and the demo's 8-policy, 26-size
// grid peaked at 3.4 GB with one worker, against 27-95 MB for any one
// policy alone.
//
// # Sampled curves
//
// Config.Sample and Config.SampleMaxKeys replay a spatial sample of the
// keys (SHARDS) with every policy at a miniature size, for traces too large
// for exact runs; rows are estimates for the whole trace and carry their
// sample rate (Row.SampleRate, the sample_rate column). At a fixed rate R
// the sizes below 1/R are computed exactly on the whole trace, in the pass
// that prepares the sample, for lru and clock up to 64 keys, whose rows
// there are exact (rate 0); the other sizes and policies but infinite
// write none there. sample.go and samplesmall.go describe the
// method; docs/benchmarks.md gives its error against exact curves.
package replay
