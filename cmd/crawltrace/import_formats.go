package main

import (
	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/recorder/importer"
)

func init() {
	importCommands = append(importCommands, newImportHeritrixCmd, newImportWARCCmd, newImportWATCmd)
}

// newImportFormatCmd builds an import subcommand that binds the shared
// flags and calls run.
func newImportFormatCmd(use, short, example string, run func([]string, importer.Options) (*importer.Stats, error)) *cobra.Command {
	o := importer.DefaultOptions()
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, args, o, run)
		},
	}
	bindImportFlags(cmd, &o)
	return cmd
}

func newImportHeritrixCmd() *cobra.Command {
	return newImportFormatCmd("heritrix FILE... -o RAW_DIR",
		"Import Heritrix 1 or 3 crawl.log files (URIs logged at the node owning their via page)",
		`  crawltrace import heritrix crawl.log -o crawl/
  crawltrace import heritrix crawl.log.gz --nodes 4 --partitioner host -o crawl/`,
		importer.Heritrix)
}

func newImportWARCCmd() *cobra.Command {
	return newImportFormatCmd("warc FILE... -o RAW_DIR",
		"Import WARC files (plain or gzip): the links and redirects of every HTTP response",
		`  crawltrace import warc crawl-00000.warc.gz -o crawl/
  crawltrace import warc *.warc.gz --nodes 8 -o crawl/`,
		importer.WARC)
}

func newImportWATCmd() *cobra.Command {
	return newImportFormatCmd("wat FILE... -o RAW_DIR",
		"Import Common Crawl WAT files: the links recorded in their metadata records",
		`  crawltrace import wat CC-MAIN-00000.warc.wat.gz -o crawl/`,
		importer.WAT)
}
