package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func init() {
	register(func() *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print the tool and trace-format versions",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				fmt.Fprintln(cmd.OutOrStdout(), versionLine())
				return nil
			},
		}
	})
}

// versionLine is what both `crawltrace version` and `crawltrace --version`
// print.
func versionLine() string {
	return fmt.Sprintf("crawltrace %s (trace format %s v%d, %s)",
		tracefile.ToolVersion, tracefile.FormatName, tracefile.FormatVersion, runtime.Version())
}
