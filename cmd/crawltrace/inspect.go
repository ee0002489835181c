package main

import (
	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
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
  crawltrace inspect --verify run/condensed/
  crawltrace inspect --verify run/crawl/`,
			Long: `inspect prints the schema, metadata, row counts and first rows of a raw
segment, a condensed trace, a results table, or of every such file of a
directory.

--verify checks instead: condensed traces and results tables against the
checksum of their data they carry (files written before checksums existed
are reported as such, not as errors). In a crawl directory, the raw
segments its manifest.json records (or, for a crawl killed before it wrote
one, its latest checkpoint) against the size and xxhash64 their writer
recorded as it wrote them; a listed segment that is missing is an error.
Segments recorded without a hash (by an older crawltrace) are read batch
by batch and reported as unchecked, not as errors; segments nothing
records (rows discarded by a resume) and the part of an open segment
written after the last checkpoint are read batch by batch, as any raw
segment outside a crawl directory is. condense never hashes.
A damaged file is an error naming it (exit 2).`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if verify {
					rec, err := recorder.RecordedSegments(args[0])
					if err != nil {
						return err
					}
					return tracefile.VerifyRecorded(cmd.OutOrStdout(), args[0], rec)
				}
				return tracefile.Inspect(cmd.OutOrStdout(), args[0], rows)
			},
		}
		cmd.Flags().IntVarP(&rows, "rows", "n", 5, "rows to show per file")
		cmd.Flags().BoolVar(&verify, "verify", false, "check every file's data against its checksum (raw segments: the size and xxhash64 the crawl recorded) instead of describing it")
		return cmd
	})
}
