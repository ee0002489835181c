package main

import (
	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/outdir"
)

// forceUsage is the help of every --force flag.
const forceUsage = "replace this command's earlier outputs in the output directory (only those), or write into a directory it did not write"

// addForce binds --force.
func addForce(cmd *cobra.Command, force *bool) {
	cmd.Flags().BoolVar(force, "force", false, forceUsage)
}

// prepareOut applies the output-directory policy (package outdir) to dir
// for command (unit: the slice of a run that shares dir, or "").
func prepareOut(dir, command, unit string, force bool) (*outdir.Dir, error) {
	return outdir.Prepare(dir, outdir.Options{Command: command, Unit: unit, Force: force})
}

// finishOut records what a run wrote in d and returns the run's error, or
// the recording's when the run succeeded.
func finishOut(d *outdir.Dir, runErr error, files ...string) error {
	if err := d.Done(files...); runErr == nil {
		return err
	}
	return runErr
}
