package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
	"github.com/crawltrace/crawltrace/replay/scenario"
)

func init() { register(newScenarioCmd) }

func newScenarioCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenario {partition|splitter-cache|threads|node-loss|locality|all} RAW_DIR -o DIR",
		Short: "Distributed-crawl what-if questions answered from a raw crawl trace",
		Long: `scenario reads a raw crawl directory (every URL that entered each node's host
splitter) and answers, without recrawling, what other partitionings, splitter
caches, thread layouts and node failures would have done. Each question writes
a CSV table, an Arrow table and a plot (PNG and SVG) into -o DIR; "all" runs
every question with its defaults and writes DIR/scenario-summary.json.`,
		Example: `  crawltrace scenario all crawl/ -o scenarios/
  crawltrace scenario partition crawl/ -o out/ --nodes 1,4,16,64 --write-traces out/traces
  crawltrace scenario splitter-cache crawl/ -o out/ --policies clock,lru --sizes 2^0..2^16 --batch 1024
  crawltrace scenario threads crawl/ -o out/ --sizes 2^4..2^20 --workers 500
  crawltrace scenario node-loss crawl/ -o out/ --event remove --node 2 --at 0.5
  crawltrace scenario locality crawl/ -o out/ --sizes 2^0..2^20`,
	}
	cmd.AddCommand(newScenarioPartitionCmd(), newScenarioSplitterCacheCmd(), newScenarioThreadsCmd(),
		newScenarioNodeLossCmd(), newScenarioLocalityCmd(), newScenarioAllCmd())
	return cmd
}

// scenarioCmd builds one question's command: args RAW_DIR, -o DIR and
// --no-plots are common; run gets the raw dir and output dir.
func scenarioCmd(use, short string, bind func(*pflag.FlagSet), run func(cmd *cobra.Command, in, out string, plots bool) ([]string, error)) *cobra.Command {
	var out string
	var noPlots, force bool
	cmd := &cobra.Command{
		Use:   use + " RAW_DIR -o DIR",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// "all" is a whole run; each question is a unit beside the others.
			unit := use
			if use == "all" {
				unit = ""
			}
			dir, err := prepareOut(out, "scenario", unit, force)
			if err != nil {
				return err
			}
			files, err := run(cmd, args[0], out, !noPlots)
			return finishOut(dir, err, files...)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output directory")
	f.BoolVar(&noPlots, "no-plots", false, "do not draw figures (write the tables only)")
	f.Bool("strict", false, "treat every cut segment (killed writer, 0 bytes, fewer rows than manifest.json records) as an error, as condense --strict")
	addForce(cmd, &force)
	bind(f)
	return cmd
}

// scenarioReading reads the crawl as condense does: each cut segment is
// a warning on stderr (once per run), or with --strict an error (exit 2).
func scenarioReading(cmd *cobra.Command) scenario.Reading {
	strict, _ := cmd.Flags().GetBool("strict")
	errw := cmd.ErrOrStderr()
	var mu sync.Mutex
	warned := map[string]bool{}
	return scenario.Reading{Strict: strict, Cut: func(c tracefile.CutSegment) {
		mu.Lock()
		defer mu.Unlock()
		if !warned[c.File] {
			warned[c.File] = true
			fmt.Fprintln(errw, c.Warning())
		}
	}}
}

// sizesFlag parses a replay-style cache size list into dst when set.
func scenarioSizes(s string, dst *[]int) error {
	if s == "" {
		return nil
	}
	v, err := replay.ParseSizes(s)
	if err != nil {
		return badInput("--sizes: %v", err)
	}
	*dst = v
	return nil
}

func scenarioPrintFiles(w io.Writer, files []string) {
	fmt.Fprintf(w, "wrote %d files", len(files))
	if len(files) > 0 {
		fmt.Fprintf(w, " (%s, ...)", files[0])
	}
	fmt.Fprintln(w)
}

func scenarioPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64) + "%"
}

func newScenarioPartitionCmd() *cobra.Command {
	cfg := scenario.DefaultPartitionConfig()
	return scenarioCmd("partition", "Load, balance and cross traffic of other partitioners and crawl sizes",
		func(f *pflag.FlagSet) {
			f.IntSliceVar(&cfg.Nodes, "nodes", cfg.Nodes, "crawler node counts N to try")
			f.StringSliceVar(&cfg.Partitioners, "partitioners", cfg.Partitioners, "partitioners: host, url, domain, consistent")
			f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "ring points per node of consistent (0: its default)")
			f.IntVar(&cfg.FramingBytes, "framing-bytes", cfg.FramingBytes, "bytes added per cross URL to estimate wire bytes")
			f.StringVar(&cfg.Order, "stream-order", cfg.Order, "stream order: time or node")
			alias(f, "order", "stream-order")
			f.StringVar(&cfg.WriteTraces, "write-traces", "", "also write each (partitioner, N)'s condensed full and cross subtraces here")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			cfg.Input, cfg.OutDir, cfg.Plots, cfg.Progress = in, out, plots, progressOut(cmd)
			cfg.Reading = scenarioReading(cmd)
			var traces *outdir.Dir
			if cfg.WriteTraces != "" {
				force, _ := cmd.Flags().GetBool("force")
				var err error
				if traces, err = prepareOut(cfg.WriteTraces, "scenario", "partition-traces", force); err != nil {
					return nil, err
				}
			}
			res, err := scenario.Partition(cfg)
			if traces != nil {
				var files []string
				if res != nil {
					files = res.Files
				}
				err = finishOut(traces, err, files...)
			}
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-11s %5s %9s %9s %9s\n", "partitioner", "N", "cross", "balance", "hosts bal")
			for _, r := range res.Rows {
				fmt.Fprintf(w, "%-11s %5d %9s %9.3f %9.3f\n", r.Partitioner, r.Nodes, scenarioPct(r.CrossFraction), r.BalanceURLs, r.BalanceHosts)
			}
			fmt.Fprintf(w, "extracting node from the page log for %d URLs, seeds %d, logging node %d\n", res.Attributed, res.Seeds, res.Fallback)
			scenarioPrintFiles(w, res.Files)
			return res.Files, nil
		})
}

func newScenarioSplitterCacheCmd() *cobra.Command {
	cfg := scenario.DefaultSplitterCacheConfig()
	var sizes string
	return scenarioCmd("splitter-cache", "What a cache in front of the host splitter's peer sends saves",
		func(f *pflag.FlagSet) {
			f.StringSliceVar(&cfg.Policies, "policies", cfg.Policies, "cache policies (online ones)")
			f.StringVar(&sizes, "sizes", "", "cache sizes, e.g. 2^0..2^16 or 64,1k (default 2^0..2^16)")
			f.IntVar(&cfg.Batch, "batch", cfg.Batch, "URLs per batch sent to a peer")
			f.IntVar(&cfg.FramingBytes, "framing-bytes", cfg.FramingBytes, "bytes added per sent URL")
			f.IntVar(&cfg.BatchBytes, "batch-bytes", cfg.BatchBytes, "bytes added per batch sent")
			f.Uint64Var(&cfg.Seed, "policy-seed", cfg.Seed, "seed of the random policies")
			alias(f, "seed", "policy-seed")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			if err := scenarioSizes(sizes, &cfg.Sizes); err != nil {
				return nil, err
			}
			cfg.Input, cfg.OutDir, cfg.Plots, cfg.Progress = in, out, plots, progressOut(cmd)
			cfg.Reading = scenarioReading(cmd)
			res, err := scenario.SplitterCache(cfg)
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-8s %9s %12s %12s %10s\n", "policy", "size", "cross", "sent", "batches")
			for _, r := range res.Rows {
				if r.Node == -1 {
					fmt.Fprintf(w, "%-8s %9d %12d %12s %10d\n", r.Policy, r.Size, r.Cross, scenarioPct(r.SentFraction), r.Batches)
				}
			}
			scenarioPrintFiles(w, res.Files)
			return res.Files, nil
		})
}

func newScenarioThreadsCmd() *cobra.Command {
	cfg := scenario.DefaultThreadsConfig()
	var sizes string
	return scenarioCmd("threads", "Per-thread LRU caches of k/W entries against one shared cache of k",
		func(f *pflag.FlagSet) {
			f.StringVar(&sizes, "sizes", "", "total cache sizes k per node (default 2^0..2^20)")
			f.IntVar(&cfg.Workers, "workers", cfg.Workers, "fetch workers W of a node, sharing k (0: the distinct workers in each node's log)")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			if err := scenarioSizes(sizes, &cfg.Sizes); err != nil {
				return nil, err
			}
			cfg.Input, cfg.OutDir, cfg.Plots, cfg.Progress = in, out, plots, progressOut(cmd)
			cfg.Reading = scenarioReading(cmd)
			res, err := scenario.Threads(cfg)
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%9s %8s %12s %12s\n", "k", "W", "global miss", "thread miss")
			for _, r := range res.Rows {
				if r.Node == -1 {
					fmt.Fprintf(w, "%9d %8d %12s %12s\n", r.Size, r.Workers, scenarioPct(r.GlobalMissRate), scenarioPct(r.ThreadMissRate))
				}
			}
			scenarioPrintFiles(w, res.Files)
			return res.Files, nil
		})
}

func newScenarioNodeLossCmd() *cobra.Command {
	cfg := scenario.DefaultNodeLossConfig()
	return scenarioCmd("node-loss", "Hosts moved and URLs fetched twice when a node dies or joins",
		func(f *pflag.FlagSet) {
			f.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "crawler nodes N before the event (0: the recorded N)")
			f.StringVar(&cfg.Event, "event", cfg.Event, "remove or add")
			f.IntVar(&cfg.Node, "node", cfg.Node, "node id to remove (adding adds id N)")
			f.Float64Var(&cfg.At, "at", cfg.At, "change point as a fraction of the stream")
			f.Int64Var(&cfg.AtRow, "at-row", cfg.AtRow, "change point as a row index of the stream (overrides --at)")
			f.StringSliceVar(&cfg.Partitioners, "partitioners", cfg.Partitioners, "partitioners to compare")
			f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "ring points per node of consistent (0: its default)")
			f.StringVar(&cfg.Order, "stream-order", cfg.Order, "stream order: time or node")
			alias(f, "order", "stream-order")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			cfg.Input, cfg.OutDir, cfg.Plots, cfg.Progress = in, out, plots, progressOut(cmd)
			cfg.Reading = scenarioReading(cmd)
			res, err := scenario.NodeLoss(cfg)
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-11s %12s %12s %12s %10s\n", "partitioner", "hosts moved", "not of node", "refetched", "balance")
			for _, r := range res.Rows {
				fmt.Fprintf(w, "%-11s %12s %12d %12d %10.3f\n", r.Partitioner, scenarioPct(r.HostsMovedFraction), r.HostsMovedOther, r.Refetched, r.BalanceHosts)
			}
			if len(res.Live) > 0 {
				fmt.Fprintln(w, "live reassignments logged by the crawl (events.jsonl):")
				for _, r := range res.Live {
					fmt.Fprintf(w, "  node %d at %s: left %v joined %v: %d hosts moved, %d not of those nodes, %d taken over\n",
						r.Node, r.Time.UTC().Format("15:04:05.000"), r.Left, r.Joined, r.HostsMoved, r.HostsMovedOther, r.HostsIn)
				}
			}
			scenarioPrintFiles(w, res.Files)
			return res.Files, nil
		})
}

func newScenarioLocalityCmd() *cobra.Command {
	cfg := scenario.DefaultLocalityConfig()
	var sizes string
	return scenarioCmd("locality", "Whether LRU hits re-reference URLs last seen on a page of the same host",
		func(f *pflag.FlagSet) {
			f.StringVar(&sizes, "sizes", "", "LRU cache sizes (default 2^0..2^20)")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			if err := scenarioSizes(sizes, &cfg.Sizes); err != nil {
				return nil, err
			}
			cfg.Input, cfg.OutDir, cfg.Plots, cfg.Progress = in, out, plots, progressOut(cmd)
			cfg.Reading = scenarioReading(cmd)
			res, err := scenario.Locality(cfg)
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%9s %9s %10s\n", "size", "hit rate", "same host")
			for _, r := range res.Rows {
				if r.Node == -1 {
					fmt.Fprintf(w, "%9d %9s %10s\n", r.Size, scenarioPct(r.HitRate), scenarioPct(r.SameHostFraction))
				}
			}
			scenarioPrintFiles(w, res.Files)
			return res.Files, nil
		})
}

func newScenarioAllCmd() *cobra.Command {
	var order string
	return scenarioCmd("all", "Every question with its defaults, and scenario-summary.json",
		func(f *pflag.FlagSet) {
			f.StringVar(&order, "stream-order", scenario.OrderTime, "stream order: time or node")
			alias(f, "order", "stream-order")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			s, err := scenario.All(scenario.AllConfig{Input: in, OutDir: out, Order: order, Plots: plots, Progress: progressOut(cmd),
				Reading: scenarioReading(cmd)})
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: %d URLs, %d hosts, %d nodes (%s)\n", in, s.URLs, s.Hosts, s.Nodes, s.Partitioner)
			for _, n := range s.Notes {
				fmt.Fprintln(w, "note:", n)
			}
			fmt.Fprintf(w, "summary: %s\n", strings.TrimSuffix(out, "/")+"/"+scenario.SummaryName)
			scenarioPrintFiles(w, s.Files)
			return s.Files, nil
		})
}
