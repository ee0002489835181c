package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/replay"
)

func init() {
	register(func() *cobra.Command {
		var inFormat, format, out string
		var force bool
		cmd := &cobra.Command{
			Use:   "export TRACE --format oracleGeneral|text -o FILE",
			Short: "Convert a trace to libCacheSim's oracleGeneral or to text",
			Long: `export converts a trace (condensed by default) to libCacheSim's oracleGeneral
binary format (24 bytes per request: time, id, size 1, next-request position;
holds the trace in memory) or to text (one decimal key per line), or back to
a condensed trace.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return badInput("export: -o FILE is required")
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
		f.StringVar(&format, "format", replay.FormatOracleGeneral, "output format: "+strings.Join(replay.Formats(), ", "))
		f.StringVarP(&out, "out", "o", "", "output file")
		f.BoolVar(&force, "force", false, "replace an existing output file")
		return cmd
	})
}
