package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

// formatParquet is export's Parquet output format.
const formatParquet = "parquet"

func init() {
	register(func() *cobra.Command {
		var inFormat, format, out string
		var force bool
		pcfg := tracefile.DefaultParquetConfig()
		cmd := &cobra.Command{
			Use:   "export TRACE --format oracleGeneral|text|condensed|parquet -o OUT",
			Short: "Convert traces to Parquet, libCacheSim's oracleGeneral, or text",
			Long: `export converts a trace (condensed by default) to libCacheSim's oracleGeneral
binary format (24 bytes per request: time, id, size 1, next-request position;
holds the trace in memory) or to text (one decimal key per line), or back to
a condensed trace.

With --format parquet it writes Parquet (zstd, row groups of --row-group-rows)
for DuckDB, polars, pandas and Spark, streaming one record batch at a time:
  - a crawl directory: OUT is a directory with node-NNN.urls.parquet and
    node-NNN.pages.parquet per node, each with a leading node column;
  - a directory of condensed traces or results tables (condensed/, replay/,
    scenario/): OUT is a directory, NAME.arrow becomes NAME.parquet;
  - one condensed trace or results table: OUT is the Parquet file.
Each file keeps its Arrow schema and carries the crawltrace metadata (crawl
id, node, subtrace, tool version, ...) as Parquet key-value metadata.`,
			Example: `  crawltrace export run/condensed/node-000.full.arrow --format text -o full.txt
  crawltrace export run/crawl --format parquet -o run/parquet/crawl
  crawltrace export run/condensed --format parquet -o run/parquet/condensed`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return badInput("export: -o FILE is required")
				}
				if strings.EqualFold(format, formatParquet) {
					if cmd.Flags().Changed("in-format") && inFormat != replay.FormatCondensed {
						return badInput("export: --format parquet reads crawltrace files (crawl directories, condensed traces, results tables); --in-format %s does not apply", inFormat)
					}
					return exportParquet(cmd, args[0], out, force, pcfg)
				}
				if err := outdir.PrepareFile("export", out, force); err != nil {
					return err
				}
				if err := replay.ExportFile(args[0], inFormat, out, format); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "wrote", out)
				return nil
			},
		}
		f := cmd.Flags()
		f.StringVar(&inFormat, "in-format", replay.FormatCondensed, "input format: "+strings.Join(replay.Formats(), ", "))
		f.StringVar(&format, "format", replay.FormatOracleGeneral, "output format: "+strings.Join(append(replay.Formats(), formatParquet), ", "))
		f.StringVarP(&out, "out", "o", "", "output file (a directory for a directory's Parquet export)")
		f.Int64Var(&pcfg.RowGroupRows, "row-group-rows", pcfg.RowGroupRows, "Parquet: rows per row group")
		f.BoolVar(&force, "force", false, "replace an existing output file (or this command's earlier outputs in the output directory)")
		return cmd
	})
}

// exportParquet runs the Parquet export of in to out under the output
// policy: a file for a file, a directory for a directory.
func exportParquet(cmd *cobra.Command, in, out string, force bool, cfg tracefile.ParquetConfig) error {
	if cfg.RowGroupRows <= 0 {
		return badInput("export: --row-group-rows must be positive")
	}
	st, err := os.Stat(in)
	if err != nil {
		return badInput("export: %s: no such file or directory", in)
	}
	var files []tracefile.ParquetFile
	if st.IsDir() {
		dir, err := prepareOut(out, "export", "", force)
		if err != nil {
			return err
		}
		files, err = tracefile.ExportParquet(in, out, cfg)
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = filepath.Base(f.Path)
		}
		if err := finishOut(dir, err, names...); err != nil {
			return err
		}
	} else {
		if err := outdir.PrepareFile("export", out, force); err != nil {
			return err
		}
		if dir := filepath.Dir(out); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("export: %w", err)
			}
		}
		if files, err = tracefile.ExportParquet(in, out, cfg); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	for _, f := range files {
		for _, c := range f.Cut {
			fmt.Fprintf(cmd.ErrOrStderr(), "export: warning: node %d: %s cut: %s (its complete batches are exported)\n", f.Node, c.File, c.Error)
		}
		fmt.Fprintf(w, "wrote %s (%s, %d rows)\n", f.Path, f.Kind, f.Rows)
	}
	return nil
}
