package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func init() { register(newCondenseCmd) }

func newCondenseCmd() *cobra.Command {
	cfg := condense.DefaultConfig()
	var memory, shard string
	cmd := &cobra.Command{
		Use:   "condense RAW_DIR -o OUT_DIR",
		Short: "Condense raw URL logs to fingerprint traces and verify collisions exactly",
		Long: `condense reads every segment of every node of a raw crawl directory (cut
segments too, reporting them), writes each node's full and cross condensed
traces (node-NNN.full.arrow, node-NNN.cross.arrow), and checks exactly that no
two distinct URLs share a fingerprint, within --memory. report.json has the
counts per node and in total and lists every colliding pair.

Collisions are a finding, not an error: they are printed and the exit status
is 0 unless --fail-on-collision.`,
		Example: `  crawltrace condense crawl/ -o condensed/
  crawltrace condense crawl/ -o condensed/ --memory 4GiB
  crawltrace condense crawl/ -o condensed/ --shard 3/16    # one shard of a cluster run
  crawltrace condense merge condensed/ -o condensed/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Input = args[0]
			if cfg.Output == "" {
				return badInput("condense: -o OUT_DIR is required")
			}
			if memory != "" {
				n, err := parseBytes(memory)
				if err != nil {
					return badInput("--memory: %v", err)
				}
				cfg.MemoryBytes = n
			}
			if shard != "" {
				if _, err := fmt.Sscanf(shard, "%d/%d", &cfg.Shard, &cfg.Shards); err != nil || cfg.Shards < 1 || cfg.Shard < 0 || cfg.Shard >= cfg.Shards {
					return badInput("--shard %q: want i/N with 0 <= i < N", shard)
				}
			}
			cfg.Progress = terminalStderr(cmd)
			cfg.LimitHeap = true
			rep, err := condense.Run(cmd.Context(), cfg)
			if rep != nil {
				printCondenseReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, filepath.Join(cfg.Output, condense.ReportName(cfg.Shard, cfg.Shards)))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.Output, "out", "o", "", "output directory for condensed traces and report.json")
	f.IntVar(&cfg.Bits, "bits", cfg.Bits, "fingerprint width in bits (below 64 only to test the collision check)")
	f.Uint64Var(&cfg.Seed, "seed", 0, "fingerprint hash seed (0 is the trace format's)")
	f.StringVar(&memory, "memory", "1GiB", "memory budget for the collision check (also the Go heap's soft limit, plus 48MiB), e.g. 512MiB, 8GiB")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "parallel workers")
	f.StringVar(&shard, "shard", "", "verify only fingerprint range i of N and write a partial report (i/N)")
	f.BoolVar(&cfg.FailOnCollision, "fail-on-collision", false, "exit non-zero when fingerprints collide")
	f.BoolVar(&cfg.NoVerify, "no-verify", false, "only write the condensed traces, skip the collision check")
	f.StringVar(&cfg.TempDir, "temp-dir", "", "where to put the spill directory (default OUT_DIR; only the spill directory is removed)")
	cmd.AddCommand(newCondenseMergeCmd())
	return cmd
}

func newCondenseMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge DIR_OR_REPORT... -o OUT_DIR",
		Short: "Combine the partial reports of a sharded condense into report.json",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var paths []string
			for _, a := range args {
				if filepath.Ext(a) == ".json" {
					paths = append(paths, a)
					continue
				}
				m, _ := filepath.Glob(filepath.Join(a, "report-shard-*-of-*.json"))
				if len(m) == 0 {
					return badInput("condense merge: %s: no report-shard-*-of-*.json files", a)
				}
				paths = append(paths, m...)
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
			dst := filepath.Join(out, condense.ReportName(0, 1))
			if err := tracefile.WriteJSON(dst, rep); err != nil {
				return err
			}
			printCondenseReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, dst)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "directory for report.json (default: the first report's directory)")
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
		fmt.Fprintf(errw, "warning: cut segment %s: recovered %d rows (%s)\n", c.File, c.RowsRecovered, c.Reason)
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

// parseBytes parses sizes like 512MiB, 4GiB, 1G, 1000000.
func parseBytes(s string) (int64, error) {
	var n float64
	var unit string
	if _, err := fmt.Sscanf(s, "%g%s", &n, &unit); err != nil {
		if _, err := fmt.Sscanf(s, "%g", &n); err != nil {
			return 0, fmt.Errorf("%q is not a size", s)
		}
	}
	mult := map[string]float64{"": 1, "B": 1, "K": 1e3, "KB": 1e3, "KiB": 1 << 10, "M": 1e6, "MB": 1e6, "MiB": 1 << 20,
		"G": 1e9, "GB": 1e9, "GiB": 1 << 30, "T": 1e12, "TB": 1e12, "TiB": 1 << 40}
	m, ok := mult[unit]
	if !ok || n <= 0 {
		return 0, errors.New("size " + s + ": unknown unit or not positive (use e.g. 512MiB, 4GiB)")
	}
	return int64(n * m), nil
}
