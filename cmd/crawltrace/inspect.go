package main

import (
	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func init() {
	register(func() *cobra.Command {
		var rows int
		var verify bool
		cmd := &cobra.Command{
			Use:   "inspect PATH",
			Short: "Print schema, metadata, row counts and first rows of a trace, results table or directory",
			Example: `  crawltrace inspect run/crawl/node-000/urls-000001.arrows
  crawltrace inspect run/condensed/node-000.full.arrow
  crawltrace inspect run/replay/results.arrow
  crawltrace inspect run/scenario/partition.arrow
  crawltrace inspect run/
  crawltrace inspect --verify run/condensed/`,
			Long: `inspect prints the schema, metadata, row counts and first rows of a raw
segment, a condensed trace, a results table, or of every such file of a
directory.

--verify checks instead: condensed traces and results tables against the
checksum of their data they carry (files written before checksums existed
are reported as such, not as errors), raw segments by reading every batch.
A damaged file is an error naming it (exit 2).`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if verify {
					return tracefile.Verify(cmd.OutOrStdout(), args[0])
				}
				return tracefile.Inspect(cmd.OutOrStdout(), args[0], rows)
			},
		}
		cmd.Flags().IntVarP(&rows, "rows", "n", 5, "rows to show per file")
		cmd.Flags().BoolVar(&verify, "verify", false, "check every file's data against its checksum instead of describing it")
		return cmd
	})
}
