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

// scenarioQuestion is one question's command: its flags, its run on the
// config whose Common the command fills, and what it prints: columns of
// the question's first table (the one its CSV holds), only the sum over
// the nodes with totals, then the lines of after, then the files written.
type scenarioQuestion[Res scenarioResult] struct {
	use, short string
	common     *scenario.Common
	// sizes, when not nil, receives the --sizes flag (sizesHelp) when given.
	sizes     *[]int
	sizesHelp string
	flags     func(*pflag.FlagSet)
	run       func(cmd *cobra.Command) (Res, error)
	totals    bool // print the rows of node -1 only
	cols      []scenarioCol
	after     func(w io.Writer, res Res)
}

// scenarioResult is what every question returns.
type scenarioResult interface {
	Tables() []*scenario.Table
	Written() []string
}

// scenarioCol is one printed column: its header, its width (negative:
// left-aligned), the table column it shows and how.
type scenarioCol struct {
	head   string
	width  int
	column string
	cell   func(any) string
}

func (q scenarioQuestion[Res]) command() *cobra.Command {
	var sizes string
	return scenarioCmd(q.use, q.short,
		func(f *pflag.FlagSet) {
			if q.sizes != nil {
				f.StringVar(&sizes, "sizes", "", q.sizesHelp)
			}
			if q.flags != nil {
				q.flags(f)
			}
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			if q.sizes != nil {
				if err := scenarioSizes(sizes, q.sizes); err != nil {
					return nil, err
				}
			}
			*q.common = scenarioCommon(cmd, in, out, plots)
			res, err := q.run(cmd)
			if err != nil {
				return nil, err
			}
			w := cmd.OutOrStdout()
			printScenarioTable(w, res.Tables()[0], q.totals, q.cols)
			if q.after != nil {
				q.after(w, res)
			}
			scenarioPrintFiles(w, res.Written())
			return res.Written(), nil
		})
}

// scenarioCommon is what every question's config shares, from the command
// line.
func scenarioCommon(cmd *cobra.Command, in, out string, plots bool) scenario.Common {
	return scenario.Common{Input: in, OutDir: out, Plots: plots, Progress: progressOut(cmd), Reading: scenarioReading(cmd)}
}

// printScenarioTable prints cols's header and their cells of t's rows
// (with totals, of the rows whose node is -1), one space between columns.
func printScenarioTable(w io.Writer, t *scenario.Table, totals bool, cols []scenarioCol) {
	index := map[string]int{}
	for i, c := range t.Columns {
		index[c.Name] = i
	}
	at := func(name string) int {
		i, ok := index[name]
		if !ok {
			panic(fmt.Sprintf("crawltrace: table %s has no column %s", t.Name, name))
		}
		return i
	}
	cells := make([]string, len(cols))
	line := func(cell func(scenarioCol) string) {
		for i, c := range cols {
			cells[i] = fmt.Sprintf("%*s", c.width, cell(c))
		}
		fmt.Fprintln(w, strings.Join(cells, " "))
	}
	line(func(c scenarioCol) string { return c.head })
	for _, r := range t.Rows {
		if !totals || r[at("node")] == int64(-1) {
			line(func(c scenarioCol) string { return c.cell(r[at(c.column)]) })
		}
	}
}

// Cells: a count or a name as it is, a fraction as a percentage, a ratio
// with three decimals.
func scenarioPlain(v any) string   { return fmt.Sprint(v) }
func scenarioPctCell(v any) string { return scenarioPct(v.(float64)) }
func scenarioFixed3(v any) string  { return strconv.FormatFloat(v.(float64), 'f', 3, 64) }

func newScenarioPartitionCmd() *cobra.Command {
	cfg := scenario.DefaultPartitionConfig()
	return scenarioQuestion[*scenario.PartitionResult]{
		use: "partition", short: "Load, balance and cross traffic of other partitioners and crawl sizes", common: &cfg.Common,
		flags: func(f *pflag.FlagSet) {
			f.IntSliceVar(&cfg.Nodes, "nodes", cfg.Nodes, "crawler node counts N to try")
			f.StringSliceVar(&cfg.Partitioners, "partitioners", cfg.Partitioners, "partitioners: host, url, domain, consistent")
			f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "ring points per node of consistent (0: its default)")
			f.IntVar(&cfg.FramingBytes, "framing-bytes", cfg.FramingBytes, "bytes added per cross URL to estimate wire bytes")
			f.StringVar(&cfg.Order, "stream-order", cfg.Order, "stream order: time or node")
			alias(f, "order", "stream-order")
			f.StringVar(&cfg.WriteTraces, "write-traces", "", "also write each (partitioner, N)'s condensed full and cross subtraces here")
		},
		run: func(cmd *cobra.Command) (*scenario.PartitionResult, error) {
			if cfg.WriteTraces == "" {
				return scenario.Partition(cfg)
			}
			force, _ := cmd.Flags().GetBool("force")
			traces, err := prepareOut(cfg.WriteTraces, "scenario", "partition-traces", force)
			if err != nil {
				return nil, err
			}
			res, err := scenario.Partition(cfg)
			var files []string
			if res != nil {
				files = res.Files
			}
			return res, finishOut(traces, err, files...)
		},
		cols: []scenarioCol{
			{"partitioner", -11, "partitioner", scenarioPlain},
			{"N", 5, "nodes", scenarioPlain},
			{"cross", 9, "cross_fraction", scenarioPctCell},
			{"balance", 9, "balance_urls", scenarioFixed3},
			{"hosts bal", 9, "balance_hosts", scenarioFixed3},
		},
		after: func(w io.Writer, res *scenario.PartitionResult) {
			fmt.Fprintf(w, "extracting node from the page log for %d URLs, seeds %d, logging node %d\n", res.Attributed, res.Seeds, res.Fallback)
		},
	}.command()
}

func newScenarioSplitterCacheCmd() *cobra.Command {
	cfg := scenario.DefaultSplitterCacheConfig()
	return scenarioQuestion[*scenario.SplitterCacheResult]{
		use: "splitter-cache", short: "What a cache in front of the host splitter's peer sends saves", common: &cfg.Common,
		sizes: &cfg.Sizes, sizesHelp: "cache sizes, e.g. 2^0..2^16 or 64,1k (default 2^0..2^16)",
		flags: func(f *pflag.FlagSet) {
			f.StringSliceVar(&cfg.Policies, "policies", cfg.Policies, "cache policies (online ones)")
			f.IntVar(&cfg.Batch, "batch", cfg.Batch, "URLs per batch sent to a peer")
			f.IntVar(&cfg.FramingBytes, "framing-bytes", cfg.FramingBytes, "bytes added per sent URL")
			f.IntVar(&cfg.BatchBytes, "batch-bytes", cfg.BatchBytes, "bytes added per batch sent")
			f.Uint64Var(&cfg.Seed, "policy-seed", cfg.Seed, "seed of the random policies")
			alias(f, "seed", "policy-seed")
		},
		run:    func(*cobra.Command) (*scenario.SplitterCacheResult, error) { return scenario.SplitterCache(cfg) },
		totals: true,
		cols: []scenarioCol{
			{"policy", -8, "policy", scenarioPlain},
			{"size", 9, "size", scenarioPlain},
			{"cross", 12, "cross", scenarioPlain},
			{"sent", 12, "sent_fraction", scenarioPctCell},
			{"batches", 10, "batches", scenarioPlain},
		},
	}.command()
}

func newScenarioThreadsCmd() *cobra.Command {
	cfg := scenario.DefaultThreadsConfig()
	return scenarioQuestion[*scenario.ThreadsResult]{
		use: "threads", short: "Per-thread LRU caches of k/W entries against one shared cache of k", common: &cfg.Common,
		sizes: &cfg.Sizes, sizesHelp: "total cache sizes k per node (default 2^0..2^20)",
		flags: func(f *pflag.FlagSet) {
			f.IntVar(&cfg.Workers, "workers", cfg.Workers, "fetch workers W of a node, sharing k (0: the distinct workers in each node's log)")
		},
		run:    func(*cobra.Command) (*scenario.ThreadsResult, error) { return scenario.Threads(cfg) },
		totals: true,
		cols: []scenarioCol{
			{"k", 9, "size", scenarioPlain},
			{"W", 8, "workers", scenarioPlain},
			{"global miss", 12, "global_miss_rate", scenarioPctCell},
			{"thread miss", 12, "thread_miss_rate", scenarioPctCell},
		},
	}.command()
}

func newScenarioNodeLossCmd() *cobra.Command {
	cfg := scenario.DefaultNodeLossConfig()
	return scenarioQuestion[*scenario.NodeLossResult]{
		use: "node-loss", short: "Hosts moved and URLs fetched twice when a node dies or joins", common: &cfg.Common,
		flags: func(f *pflag.FlagSet) {
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
		run: func(*cobra.Command) (*scenario.NodeLossResult, error) { return scenario.NodeLoss(cfg) },
		cols: []scenarioCol{
			{"partitioner", -11, "partitioner", scenarioPlain},
			{"hosts moved", 12, "hosts_moved_fraction", scenarioPctCell},
			{"not of node", 12, "hosts_moved_other", scenarioPlain},
			{"refetched", 12, "refetched", scenarioPlain},
			{"balance", 10, "balance_hosts", scenarioFixed3},
		},
		after: func(w io.Writer, res *scenario.NodeLossResult) {
			if len(res.Live) > 0 {
				fmt.Fprintln(w, "live reassignments logged by the crawl (events.jsonl):")
				for _, r := range res.Live {
					fmt.Fprintf(w, "  node %d at %s: left %v joined %v: %d hosts moved, %d not of those nodes, %d taken over\n",
						r.Node, r.Time.UTC().Format("15:04:05.000"), r.Left, r.Joined, r.HostsMoved, r.HostsMovedOther, r.HostsIn)
				}
			}
		},
	}.command()
}

func newScenarioLocalityCmd() *cobra.Command {
	cfg := scenario.DefaultLocalityConfig()
	return scenarioQuestion[*scenario.LocalityResult]{
		use: "locality", short: "Whether LRU hits re-reference URLs last seen on a page of the same host", common: &cfg.Common,
		sizes: &cfg.Sizes, sizesHelp: "LRU cache sizes (default 2^0..2^20)",
		run:    func(*cobra.Command) (*scenario.LocalityResult, error) { return scenario.Locality(cfg) },
		totals: true,
		cols: []scenarioCol{
			{"size", 9, "size", scenarioPlain},
			{"hit rate", 9, "hit_rate", scenarioPctCell},
			{"same host", 10, "same_host_fraction", scenarioPctCell},
		},
	}.command()
}

func newScenarioAllCmd() *cobra.Command {
	var order string
	return scenarioCmd("all", "Every question with its defaults, and scenario-summary.json",
		func(f *pflag.FlagSet) {
			f.StringVar(&order, "stream-order", scenario.OrderTime, "stream order: time or node")
			alias(f, "order", "stream-order")
		},
		func(cmd *cobra.Command, in, out string, plots bool) ([]string, error) {
			c := scenarioCommon(cmd, in, out, plots)
			s, err := scenario.All(scenario.AllConfig{Input: c.Input, OutDir: c.OutDir, Order: order, Plots: c.Plots, Progress: c.Progress,
				Reading: c.Reading})
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
