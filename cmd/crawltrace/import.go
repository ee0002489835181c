package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/importer"
)

// importCommands lists the `crawltrace import` subcommands; each format's
// file adds its own in an init function.
var importCommands []func() *cobra.Command

func init() {
	register(func() *cobra.Command {
		cmd := &cobra.Command{
			Use:   "import FORMAT",
			Short: "Turn existing crawl logs into raw traces (urls, heritrix, warc, wat)",
		}
		for _, f := range importCommands {
			cmd.AddCommand(f())
		}
		return cmd
	})
	importCommands = append(importCommands, newImportURLsCmd)
}

// bindImportFlags binds the options every importer shares.
func bindImportFlags(cmd *cobra.Command, o *importer.Options) {
	f := cmd.Flags()
	f.StringVarP(&o.Out, "out", "o", "", "output raw trace directory")
	f.IntVar(&o.Nodes, "nodes", o.Nodes, "crawler nodes to simulate")
	f.StringVar(&o.Partitioner, "partitioner", o.Partitioner, "host splitter partitioner for dest: host, url, domain, consistent")
	f.IntVar(&o.Replicas, "replicas", 0, "replicas per node for the consistent partitioner (0: default)")
	f.StringVar(&o.CrawlID, "crawl-id", "", "crawl id for the metadata (default: import-<time>)")
	f.BoolVar(&o.Raw, "raw", false, "log URLs exactly as given instead of normalizing them")
	f.Bool("force", false, forceUsage)
}

// runImport runs one importer into o.Out under the output-directory
// policy and prints its summary.
func runImport(cmd *cobra.Command, args []string, o importer.Options, run func([]string, importer.Options) (*importer.Stats, error)) error {
	for _, a := range args {
		if a == "-" { // standard input
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return fmt.Errorf("import %s: %w", cmd.Name(), tracefile.InputError(err))
		}
		if st.IsDir() {
			return badInput("import %s: %s is a directory: give the files to import", cmd.Name(), a)
		}
	}
	force, _ := cmd.Flags().GetBool("force")
	// One writer: an import into a directory a crawl or another import
	// is writing is refused, before anything in it is removed.
	lock, err := outdir.LockCrawl("import", o.Out, nil, false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	dir, err := prepareOut(o.Out, "import", "", force)
	if err != nil {
		return err
	}
	st, err := run(args, o)
	if err = finishOut(dir, err); err != nil {
		return err
	}
	printImportStats(cmd.OutOrStdout(), st, o.Out)
	return nil
}

// printImportStats prints the summary every importer shows.
func printImportStats(out io.Writer, st *importer.Stats, dir string) {
	fmt.Fprintf(out, "imported %d URLs into %s (%d nodes, %d cross)", st.Rows, dir, len(st.PerNode), st.Cross)
	if st.Skipped > 0 {
		fmt.Fprintf(out, ", %d records skipped", st.Skipped)
	}
	fmt.Fprintln(out)
	if st.BadLines > 0 {
		fmt.Fprintf(out, "%d bad lines not imported:\n", st.BadLines)
		for _, b := range st.Bad {
			fmt.Fprintf(out, "  %s:%d: %s\n", b.File, b.Line, b.Reason)
		}
		if int64(len(st.Bad)) < st.BadLines {
			fmt.Fprintf(out, "  ... (all listed counts in %s/import-stats.json)\n", dir)
		}
	}
}

func newImportURLsCmd() *cobra.Command {
	o := importer.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "urls FILE... -o RAW_DIR",
		Short: "Import plain URL logs (one URL per line, optional tab-separated node and dest)",
		Example: `  crawltrace import urls urls.txt -o crawl/
  crawltrace import urls node0.txt --nodes 4 --partitioner host -o crawl/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, args, o, importer.URLs)
		},
	}
	bindImportFlags(cmd, &o)
	return cmd
}
