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
			Use:   "export TRACE -o OUT.parquet|OUT.txt|OUT.oracleGeneral|OUT.bin",
			Short: "Convert traces to Parquet, libCacheSim's oracleGeneral, or text",
			Long: `export converts a trace (condensed by default, --in-format for others) to
the format -o's extension names (--format, when given, must agree with it):

  .parquet               Parquet (zstd, row groups of --row-group-rows) for
                         DuckDB, polars, pandas and Spark
  .oracleGeneral, .bin   libCacheSim's oracleGeneral binary format (24 bytes
                         per request: time, id, size 1, next-request position;
                         holds the trace in memory)
  .txt                   text, one decimal key per line
  .arrow                 a condensed trace

A directory is exported to Parquet, streaming one record batch at a time:
  - a crawl directory: OUT is a directory with node-NNN.urls.parquet and
    node-NNN.pages.parquet per node, each with a leading node column;
  - a directory of condensed traces or results tables (condensed/, replay/,
    scenario/): OUT is a directory, NAME.arrow becomes NAME.parquet.
Each Parquet file keeps its Arrow schema and carries the crawltrace metadata
(crawl id, node, subtrace, tool version, ...) as key-value metadata.`,
			Example: `  crawltrace export run/condensed/node-000.full.arrow -o full.parquet
  crawltrace export run/condensed/node-000.full.arrow -o full.txt
  crawltrace export run/condensed/node-000.full.arrow -o full.oracleGeneral
  crawltrace export run/crawl -o run/parquet/crawl
  crawltrace export run/condensed -o run/parquet/condensed`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return badInput("export: -o FILE is required; its extension names the format (.parquet, .txt, .oracleGeneral, .bin)")
				}
				st, err := os.Stat(args[0])
				if err != nil {
					return badInput("export: %s: no such file or directory", args[0])
				}
				if format, err = exportFormat(format, cmd.Flags().Changed("format"), out, st.IsDir()); err != nil {
					return err
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
		f.StringVar(&format, "format", "", "output format: "+strings.Join(append(replay.Formats(), formatParquet), ", ")+" (default: the one -o's extension names)")
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
