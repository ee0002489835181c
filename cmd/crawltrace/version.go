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
				fmt.Fprintf(cmd.OutOrStdout(), "crawltrace %s (trace format %s v%d, %s)\n",
					tracefile.ToolVersion, tracefile.FormatName, tracefile.FormatVersion, runtime.Version())
				return nil
			},
		}
	})
}
