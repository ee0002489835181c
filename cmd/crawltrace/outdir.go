package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
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

// sliceUnit is the output unit of slice i of n of a run split across
// tasks ("map-3-of-16" for kind "map"), or "" (the whole run) when n <= 1.
func sliceUnit(kind string, i, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("%s-%d-of-%d", kind, i, n)
}

// finishOut records what a run wrote in d and returns the run's error, or
// the recording's when the run succeeded.
func finishOut(d *outdir.Dir, runErr error, files ...string) error {
	if err := d.Done(files...); runErr == nil {
		return err
	}
	return runErr
}

// runInOut is how a command runs its library call in an output directory
// that prepareOut prepared: under signalContext (the first SIGINT or
// SIGTERM cancels the run, which stops and returns what it has), then
// finishRun. files names what a result says it wrote.
func runInOut[R any](cmd *cobra.Command, d *outdir.Dir, run func(context.Context) (*R, error), files func(*R) []string) (*R, error) {
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	res, err := run(ctx)
	return res, finishRun(d, res, err, files)
}

// finishRun is finishOut for a run that returned res (nil: nothing
// written), whose files are files(res).
func finishRun[R any](d *outdir.Dir, res *R, runErr error, files func(*R) []string) error {
	if res == nil {
		return finishOut(d, runErr)
	}
	return finishOut(d, runErr, files(res)...)
}

// checkCrawlOut refuses, for a new crawl, an output directory that is not
// empty and holds no crawl: nothing of a crawl's own (node-NNN
// directories, manifest.json or its lock, stats.json, the directory
// lock a crawl takes first). A directory that
// holds a crawl is left to the recorder, which refuses it without
// --resume unless it is another node's part of a TCP crawl sharing the
// directory.
func checkCrawlOut(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return badInput("crawl: %s is not a directory", dir)
		}
		return fmt.Errorf("crawl: %w", tracefile.InputError(err))
	}
	for _, e := range ents {
		n := e.Name()
		if (e.IsDir() && crawlNodeDirRE.MatchString(n)) ||
			(!e.IsDir() && (n == tracefile.ManifestName || n == "manifest.lock" || n == recorder.StatsName || n == outdir.LockName)) {
			return nil
		}
	}
	if len(ents) > 0 {
		return badInput("crawl: %s is not empty and holds no crawl (it holds %s): give a new or empty directory", dir, ents[0].Name())
	}
	return nil
}

var crawlNodeDirRE = regexp.MustCompile(`^node-[0-9]+$`)
