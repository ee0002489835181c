package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

func init() { register(newCondenseCmd) }

func newCondenseCmd() *cobra.Command {
	cfg := condense.DefaultConfig()
	var memory, shard string
	var force bool
	cmd := &cobra.Command{
		Use:   "condense RAW_DIR -o OUT_DIR [--shard i/N]",
		Short: "Condense raw URL logs to fingerprint traces and verify collisions exactly",
		Long: `condense reads every segment of every node of a raw crawl directory (cut
segments too, reporting them), writes each node's full and cross condensed
traces (node-NNN.full.arrow, node-NNN.cross.arrow), and checks exactly that no
two distinct URLs share a fingerprint, within --memory. report.json has the
counts per node and in total and lists every colliding pair. While the
distinct URLs fit --memory, the check runs in memory (report.json:
in_memory); beyond that, first occurrences are spilled to disk by
fingerprint range and each range is checked on its own.

Cut segments (a writer killed mid-write, a 0-byte file, a file holding fewer
rows than manifest.json records) are read as far as they go and reported as
warnings; --strict makes them an error (exit 2).

Collisions are a finding, not an error: they are printed and the exit status
is 0 unless --fail-on-collision.

On a cluster, --shard i/N makes this map task i of N: it reads only the i-th
of N equal byte ranges of the input (every node's segments end to end, split
between record batches, so even a one-node crawl or an import splits evenly;
each input byte is read by one task), writes its part of each node's traces
to OUT_DIR/parts/map-i/, and leaves fingerprint-range buckets in
OUT_DIR/buckets/ and its counts in OUT_DIR/map-i-of-N.json. When every map
task is done, run 'condense reduce OUT_DIR --shard j/N' for each j (exact
check of range j), then 'condense merge OUT_DIR -o OUT_DIR' for report.json
and the traces (the parts joined in order). OUT_DIR must be on a file system
every task sees.`,
		Example: `  crawltrace condense crawl/ -o condensed/
  crawltrace condense crawl/ -o condensed/ --memory 4GiB
  crawltrace condense crawl/ -o condensed/ --shard 3/16    # map task 3 of a cluster run
  crawltrace condense reduce condensed/ --shard 3/16       # reduce task 3, after every map
  crawltrace condense merge condensed/ -o condensed/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Input = args[0]
			if memory != "" {
				n, err := parseMemory(memory)
				if err != nil {
					return badInput("--memory: %v", err)
				}
				cfg.MemoryBytes = n
			}
			if shard != "" {
				var err error
				if cfg.Shard, cfg.Shards, err = parseShard(shard); err != nil {
					return err
				}
			}
			dir, err := prepareOut(cfg.Output, "condense", sliceUnit("map", cfg.Shard, cfg.Shards), force)
			if err != nil {
				return err
			}
			cfg.Progress = progressOut(cmd)
			cfg.LimitHeap = true
			reportPath := filepath.Join(cfg.Output, condense.ReportName(0, 1))
			if cfg.Shards > 1 {
				reportPath = filepath.Join(cfg.Output, condense.MapReportName(cfg.Shard, cfg.Shards))
			}
			rep, err := runInOut(cmd, dir, func(ctx context.Context) (*condense.Report, error) { return condense.Run(ctx, cfg) },
				func(rep *condense.Report) []string {
					if cfg.Shards > 1 {
						// Only this task's buckets and parts: the other
						// tasks' sit beside them.
						return []string{condense.MapBucketDir(cfg.Output, cfg.Shard), condense.MapPartsDir(cfg.Output, cfg.Shard), reportPath}
					}
					files := []string{reportPath}
					for _, n := range rep.PerNode {
						files = append(files, n.Full, n.Cross)
					}
					return files
				})
			if rep != nil {
				printCondenseReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, reportPath)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.Output, "out", "o", "", "output directory for condensed traces and report.json")
	f.IntVar(&cfg.Bits, "bits", cfg.Bits, "fingerprint width in bits (below 64 only to test the collision check)")
	f.Uint64Var(&cfg.Seed, "fingerprint-seed", 0, "fingerprint hash seed (0 is the trace format's)")
	alias(f, "seed", "fingerprint-seed")
	f.StringVar(&memory, "memory", "1GiB", "memory budget for the collision check (also the Go heap's soft limit, plus 24MiB), e.g. 512MiB, 8GiB, or auto (what the machine has available)")
	f.IntVar(&cfg.Workers, "jobs", cfg.Workers, "parallel jobs (default: all CPUs)")
	alias(f, "workers", "jobs")
	f.StringVar(&shard, "shard", "", "map task i of N of a cluster run: read the i-th of N equal byte ranges of the input, write its parts of the traces and its buckets (i/N)")
	f.BoolVar(&cfg.FailOnCollision, "fail-on-collision", false, "exit non-zero when fingerprints collide")
	f.BoolVar(&cfg.Strict, "strict", false, "treat every cut segment (killed writer, 0 bytes, fewer rows than manifest.json records) as an error")
	f.BoolVar(&cfg.NoVerify, "no-verify", false, "only write the condensed traces, skip the collision check")
	f.StringVar(&cfg.TempDir, "temp-dir", "", "where to put the spill directory (default OUT_DIR; only the spill directory is removed)")
	addForce(cmd, &force)
	cmd.AddCommand(newCondenseMergeCmd(), newCondenseReduceCmd())
	return cmd
}

func parseShard(s string) (i, n int, err error) {
	// The same i/N syntax as replay --task (Sscanf took "0/2junk").
	if i, n, err = replay.ParseTask(s); err != nil {
		return 0, 0, badInput("--shard %q: want i/N with 0 <= i < N", s)
	}
	return i, n, nil
}

func newCondenseReduceCmd() *cobra.Command {
	var cfg condense.ReduceConfig
	var memory, shard string
	var force bool
	cmd := &cobra.Command{
		Use:   "reduce OUT_DIR --shard j/N",
		Short: "Verify fingerprint range j of a sharded condense exactly, from every map task's buckets",
		Long: `reduce is the second step of a sharded condense: once every map task
('condense RAW -o OUT_DIR --shard i/N') has written OUT_DIR/map-i-of-N.json,
reduce task j reads the buckets of fingerprint range j from all of them,
compares every distinct URL within its fingerprint group, and writes
OUT_DIR/report-shard-j-of-N.json. Then 'condense merge OUT_DIR -o OUT_DIR'.`,
		Example: `  crawltrace condense reduce condensed/ --shard 3/16 --memory 24GiB`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Dir = args[0]
			if shard == "" {
				return badInput("condense reduce: --shard j/N is required")
			}
			var err error
			if cfg.Shard, cfg.Shards, err = parseShard(shard); err != nil {
				return err
			}
			if cfg.MemoryBytes, err = parseMemory(memory); err != nil {
				return badInput("--memory: %v", err)
			}
			dir, err := prepareOut(cfg.Dir, "condense", fmt.Sprintf("reduce-%d-of-%d", cfg.Shard, cfg.Shards), force)
			if err != nil {
				return err
			}
			cfg.Progress = progressOut(cmd)
			cfg.LimitHeap = true
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			rep, err := condense.Reduce(ctx, cfg)
			dst := filepath.Join(cfg.Dir, condense.ReportName(cfg.Shard, cfg.Shards))
			if err == nil {
				t := rep.Total
				fmt.Fprintf(cmd.OutOrStdout(), "range %d/%d: %d distinct URLs, %d distinct fingerprints, %d colliding pairs\n",
					cfg.Shard, cfg.Shards, t.DistinctURLs, t.DistinctFPs, t.CollisionPairs)
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", dst)
			}
			return finishOut(dir, err, dst)
		},
	}
	f := cmd.Flags()
	f.StringVar(&shard, "shard", "", "reduce task j of N of a cluster run: the fingerprint range to verify (j/N, N as in the map tasks)")
	f.StringVar(&memory, "memory", "1GiB", "memory budget (also the Go heap's soft limit, plus 24MiB), e.g. 512MiB, 8GiB, or auto (what the machine has available)")
	f.IntVar(&cfg.Workers, "jobs", 0, "parallel jobs (default: all CPUs)")
	alias(f, "workers", "jobs")
	f.StringVar(&cfg.TempDir, "temp-dir", "", "where to split oversized ranges (default OUT_DIR)")
	addForce(cmd, &force)
	return cmd
}

func newCondenseMergeCmd() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "merge DIR_OR_REPORT... -o OUT_DIR",
		Short: "Combine the map and reduce steps of a sharded condense into report.json and the traces",
		Long: `merge reads the map-i-of-N.json and report-shard-j-of-N.json files of a
sharded condense (in the directories given, or the files named), checks that
every task 0..N-1 of both steps is there once and from the same crawl and
fingerprint setting, and writes report.json, equal to an unsharded run's but
for timings. It then joins the map tasks' parts of each node's traces
(parts/map-i/ beside the reports), in task order, which is the node's log
order, into node-NNN.full.arrow and node-NNN.cross.arrow in OUT_DIR. The
bucket and part files are then removed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var paths, dirs []string
			for _, a := range args {
				if filepath.Ext(a) == ".json" {
					paths = append(paths, a)
					continue
				}
				m, _ := filepath.Glob(filepath.Join(a, "map-*-of-*.json"))
				r, _ := filepath.Glob(filepath.Join(a, "report-shard-*-of-*.json"))
				if len(m)+len(r) == 0 {
					return badInput("condense merge: %s: no map-*-of-*.json or report-shard-*-of-*.json files", a)
				}
				paths = append(append(paths, m...), r...)
				dirs = append(dirs, a)
			}
			var parts []*condense.Report
			for _, p := range paths {
				r, err := condense.ReadReport(p)
				if err != nil {
					return err
				}
				parts = append(parts, r)
			}
			rep, err := condense.Merge(parts)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Dir(paths[0])
			}
			dir, err := prepareOut(out, "condense", "merge", force)
			if err != nil {
				return err
			}
			partsDir := filepath.Dir(paths[0])
			if len(dirs) > 0 {
				partsDir = dirs[0]
			}
			dst := filepath.Join(out, condense.ReportName(0, 1))
			files := []string{dst}
			err = condense.MergeTraces(partsDir, out, rep)
			if err == nil {
				err = tracefile.WriteJSON(dst, rep)
			}
			for _, n := range rep.PerNode {
				files = append(files, n.Full, n.Cross)
			}
			if err := finishOut(dir, err, files...); err != nil {
				return err
			}
			for _, d := range dirs {
				os.RemoveAll(filepath.Join(d, condense.BucketDir))
			}
			printCondenseReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, dst)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (default: the first report's)")
	addForce(cmd, &force)
	return cmd
}

func printCondenseReport(out, errw io.Writer, rep *condense.Report, path string) {
	t := rep.Total
	fmt.Fprintf(out, "condensed %d URLs (%d cross) from %d nodes: %d distinct URLs, %d distinct fingerprints (%d-bit)\n",
		t.Rows, t.CrossRows, len(rep.PerNode), t.DistinctURLs, t.DistinctFPs, rep.Bits)
	for _, n := range rep.PerNode {
		if n.Full != "" {
			fmt.Fprintf(out, "  node %d: %d rows, %d cross (%.1f%%), %d distinct URLs -> %s, %s\n", n.Node, n.Rows, n.CrossRows,
				pct(n.CrossRows, n.Rows), n.DistinctURLs, n.Full, filepath.Base(n.Cross))
		}
	}
	for _, c := range rep.CutSegments {
		fmt.Fprintln(errw, c.Warning())
	}
	if t.CollisionPairs > 0 {
		fmt.Fprintf(errw, "FINGERPRINT COLLISIONS: %d pairs of distinct URLs share a fingerprint (expected %.3g at %d bits)\n",
			t.CollisionPairs, t.ExpectedCollisions, rep.Bits)
		for i, c := range t.Collisions {
			if i == 10 {
				fmt.Fprintf(errw, "  ... %d more in %s\n", t.CollisionPairs-10, path)
				break
			}
			fmt.Fprintf(errw, "  %s: %s  <->  %s\n", c.FPHex, c.A, c.B)
		}
	} else if rep.Shards <= 1 || len(rep.ShardsMerged) > 0 {
		fmt.Fprintf(out, "no fingerprint collisions (expected %.3g at %d bits)\n", t.ExpectedCollisions, rep.Bits)
	}
	fmt.Fprintf(out, "wrote %s\n", path)
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// parseBytes parses a size as every --memory does (replay.ParseBytes):
// 512MiB, 4GiB, 4gb, 4G and 4294967296 alike, units in powers of 1024.
func parseBytes(s string) (int64, error) {
	n, err := replay.ParseBytes(s)
	if err == nil && n <= 0 {
		err = fmt.Errorf("size %q: want a size above 0, e.g. 512MiB or 4GiB", s)
	}
	return n, err
}
