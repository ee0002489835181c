package main

import (
	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func init() {
	register(func() *cobra.Command {
		var rows int
		cmd := &cobra.Command{
			Use:   "inspect PATH",
			Short: "Print schema, metadata, row counts and first rows of a trace, results table or directory",
			Example: `  crawltrace inspect run/crawl/node-000/urls-000001.arrows
  crawltrace inspect run/condensed/node-000.full.arrow
  crawltrace inspect run/replay/results.arrow
  crawltrace inspect run/scenario/partition.arrow
  crawltrace inspect run/`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return tracefile.Inspect(cmd.OutOrStdout(), args[0], rows)
			},
		}
		cmd.Flags().IntVarP(&rows, "rows", "n", 5, "rows to show per file")
		return cmd
	})
}
