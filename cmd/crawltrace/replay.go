package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/replay"
	"github.com/crawltrace/crawltrace/replay/policy"
)

func init() {
	register(newReplayCmd)
}

func newReplayCmd() *cobra.Command {
	cfg := replay.DefaultConfig()
	var policies, sizes, task, memory string
	var noPlots, force bool
	cmd := &cobra.Command{
		Use:   "replay TRACE...",
		Short: "Replay traces through cache policies at many cache sizes",
		Long: `replay runs every trace through every policy at every cache size and writes
DIR/results.csv, DIR/results.arrow, DIR/memory.csv and the figures
(missrate-*, relative-*, full-vs-cross-*; curves over cache size, so not for
a run at one size). A directory argument stands for the
*.arrow condensed traces in it. infinite computes all sizes in one pass; lru,
min and static do too from 4 sizes on, and run once per size below that
(--algorithm overrides the choice); min, and static run per size, hold the
trace in memory.

Before the first run, replay estimates the run's peak memory (the trace in
memory for min and static per size, 12 or 16 bytes a request with min's
next-use times, and the simulations running at once at the keys they can
hold) and refuses to start, exiting 1 with the memory needed, when it exceeds
what the machine has available (or --memory).

With --sample RATE (e.g. 0.01) only the keys whose hash falls in a share RATE
of the hash space are replayed, each policy at its size x RATE, and the rows
are estimates for the whole trace (SHARDS and miniature simulation;
--sample-max-keys bounds the sample's keys instead). Sampled rows, the
results' metadata and the figures give the rate. With --sample, the sizes
below 1/RATE, which a sample cannot resolve, are computed exactly for lru and
clock (up to 64 keys) on the whole trace in the same pass (their rows have no
rate); the other sizes and policies but infinite write no row there, nor any
policy with --sample-omit-small.

With --task i/N only slice i (0-based) of N of the run grid is computed and
written to DIR/results-task-i-of-N.csv; combine the slices with
'crawltrace replay merge'.`,
		Example: `  crawltrace replay out/condensed --sizes 2^0..2^25 -o results
  crawltrace replay trace.bin --in-format oracleGeneral --policies lru,clock,min --sizes 1k,64k,1m
  crawltrace replay big.arrow --sample 0.01 --policies lru,clock -o sampled
  crawltrace replay out/condensed --task 3/16 -o results && crawltrace replay merge results -o final`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if cfg.Traces, err = replay.ExpandTraces(args); err != nil {
				return err
			}
			cfg.Policies = splitCommaList(policies)
			if cfg.Sizes, err = replay.ParseSizes(sizes); err != nil {
				return badInput("--sizes: %v", err)
			}
			if _, err := replay.CheckSizes(cfg.Sizes); err != nil {
				return fmt.Errorf("--sizes: %w", err)
			}
			if task != "" {
				if cfg.Task, cfg.Tasks, err = replay.ParseTask(task); err != nil {
					return badInput("--task: %v", err)
				}
			}
			if cfg.Memory, err = parseMemoryFlag(memory); err != nil {
				return badInput("--memory: %v", err)
			}
			cfg.Plots = !noPlots
			// Sizes asked for are all drawn; the default grid stops a
			// doubling past each trace's distinct URLs.
			cfg.PlotAllSizes = cmd.Flags().Changed("sizes")
			cfg.Progress = progressOut(cmd)
			dir, err := prepareOut(cfg.OutDir, "replay", sliceUnit("task", cfg.Task, cfg.Tasks), force)
			if err != nil {
				return err
			}
			res, err := runInOut(cmd, dir, func(ctx context.Context) (*replay.Results, error) { return replay.Run(ctx, cfg) }, resultFiles)
			if err != nil {
				return err
			}
			printResults(cmd.OutOrStdout(), res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Format, "in-format", cfg.Format, "input format: "+strings.Join(replay.Formats(), ", "))
	alias(f, "format", "in-format")
	f.StringVar(&policies, "policies", strings.Join(cfg.Policies, ","), "comma-separated policies (all: "+strings.Join(policy.Names(), ",")+")")
	f.StringVar(&sizes, "sizes", "2^0..2^25", "cache sizes: list and ranges, e.g. 16,1024 or 1k,64k,1m or 2^0..2^25")
	f.IntVar(&cfg.Seeds, "random-runs", cfg.Seeds, "runs (seeds 1..N) of randomized policies; rows give mean and std")
	// --seeds is crawl's seed-URL file; replay's old name stays as an alias.
	f.IntVar(&cfg.Seeds, "seeds", cfg.Seeds, "")
	deprecate(f, "seeds", "random-runs")
	f.Int64Var(&cfg.Warmup, "warmup", 0, "requests per trace that warm the caches but are not counted")
	f.BoolVar(&cfg.ChargeStatic, "charge-static", false, "count STATIC's preloads as misses")
	f.StringVar(&task, "task", "", "run only slice i of N of the grid (i/N, 0-based)")
	f.StringVar(&cfg.Algorithm, "algorithm", replay.AlgorithmAuto, "lru, min and static: one-pass (all sizes at once), per-size, or auto (per size below 4 sizes)")
	f.BoolVar(&cfg.MINPerSize, "min-per-size", false, "run MIN once per size whatever --algorithm says")
	f.Float64Var(&cfg.Sample, "sample", 0, "replay a spatial sample of this share of the keys at size x RATE (SHARDS, miniature simulation), e.g. 0.01; 0 = exact")
	f.BoolVar(&cfg.SampleOmitSmall, "sample-omit-small", false, "with --sample, write no row below 1/RATE rather than compute lru's and clock's exactly there")
	f.IntVar(&cfg.SampleMaxKeys, "sample-max-keys", 0, "sample at most this many keys (SHARDS fixed size; lowers the rate as keys arrive)")
	f.StringVar(&memory, "memory", "auto", "memory budget of the run, e.g. 512MiB, 20GiB, or auto (what the machine has available) or off (no check); a run estimated to need more is refused before it starts")
	f.IntVar(&cfg.Workers, "jobs", 0, "parallel jobs: simulations at once (0 = GOMAXPROCS)")
	alias(f, "workers", "jobs")
	f.StringVarP(&cfg.OutDir, "out", "o", "", "output directory")
	f.BoolVar(&noPlots, "no-plots", false, "do not draw figures")
	addForce(cmd, &force)
	cmd.AddCommand(newReplayMergeCmd())
	return cmd
}

// resultFiles are the files a replay wrote.
func resultFiles(r *replay.Results) []string { return r.Files }

// printResults prints a replay's summary and the files it wrote.
func printResults(w io.Writer, r *replay.Results) {
	r.Summary(w, 6)
	for _, f := range r.Files {
		fmt.Fprintln(w, "wrote", f)
	}
}

func newReplayMergeCmd() *cobra.Command {
	var out string
	var noPlots, force bool
	cmd := &cobra.Command{
		Use:   "merge DIR|FILE... -o OUT",
		Short: "Combine the results of a sliced replay (--task i/N)",
		Long: `merge reads the results-task-i-of-N.csv files of each directory (or its
results.csv, or CSV files given directly), checks that every task is present
and no row is duplicated, recomputes relative_to_min, and writes results.csv,
results.arrow, memory.csv and the figures to OUT.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := prepareOut(out, "replay", "merge", force)
			if err != nil {
				return err
			}
			res, err := replay.Merge(args, out, !noPlots)
			if err := finishRun(dir, res, err, resultFiles); err != nil {
				return err
			}
			printResults(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory")
	cmd.Flags().BoolVar(&noPlots, "no-plots", false, "do not draw figures")
	addForce(cmd, &force)
	return cmd
}

// parseMemoryFlag reads --memory: auto (0), off (-1) or a size in bytes.
func parseMemoryFlag(s string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return 0, nil
	case "off":
		return -1, nil
	}
	return parseBytes(s)
}

func splitCommaList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
