package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/crawltrace/crawltrace/internal/outdir"
	"github.com/crawltrace/crawltrace/internal/progress"
	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// commands lists the constructors of every subcommand. Each command file adds
// its own constructor in an init function, so files do not contend for one
// registration list.
var commands []func() *cobra.Command

func register(f func() *cobra.Command) { commands = append(commands, f) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "crawltrace",
		Short: "Record, condense and replay web-crawl URL traces",
		Long: `crawltrace records the stream of URLs that enters a crawler's host splitter,
condenses it to 64-bit fingerprints with exact collision checks, and replays
the condensed traces through cache policies and distributed-crawl scenarios.`,
		Version:       tracefile.ToolVersion,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(versionLine() + "\n")
	// Flag errors name the subcommand ("condense: unknown flag: --x"); the
	// "crawltrace: " prefix is added once, by runWith, for every error.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		err = flagErr(c, err)
		if c.HasParent() {
			err = fmt.Errorf("%s: %w", strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "), err)
		}
		return usageErr{err}
	})
	root.PersistentFlags().String("progress", string(progress.Auto),
		"progress lines on stderr: auto (live on a terminal, else a line every 10s), always (a line every 10s) or never")
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		v, _ := c.Flags().GetString("progress")
		if _, err := progress.ParseMode(v); err != nil {
			return usageErr{fmt.Errorf("--progress: %w", err)}
		}
		noteDeprecated(c)
		return nil
	}
	for _, f := range commands {
		root.AddCommand(f())
	}
	applyOutDefaults(root)
	// An error here is a flag table out of step with the commands; the
	// tests check it, users lose only completion.
	completionErr = registerCompletions(root)
	return root
}

// completionErr is the error of registering the flag completions.
var completionErr error

// usageErr marks a usage mistake (bad flag, bad argument count).
type usageErr struct{ error }

func (u usageErr) Unwrap() error { return u.error }

// badInput wraps an error caused by what the user gave (a file, a URL, a
// flag value); it exits with status 2.
func badInput(format string, args ...any) error {
	return usageErr{fmt.Errorf(format, args...)}
}

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	var u usageErr
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u), errors.Is(err, tracefile.ErrCorrupt), errors.Is(err, tracefile.ErrBadInput), errors.Is(err, outdir.ErrRefused):
		return 2
	default:
		return 1
	}
}

func run(args []string) int {
	return runWith(args, os.Stdout, os.Stderr)
}

func runWith(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	caught.Store(0)
	c, err := root.ExecuteC()
	if err != nil && c != nil {
		err = argCountErr(c, err)
	}
	if sig := caught.Load(); sig != 0 {
		// Interrupted: the outputs are flushed, but the run is incomplete.
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "crawltrace: "+errorLine(c, err))
		}
		fmt.Fprintln(stderr, "crawltrace: interrupted by "+signalName(sig))
		return 128 + int(sig)
	}
	if err != nil {
		msg := err.Error()
		if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "accepts ") || strings.HasPrefix(msg, "requires ") {
			err = usageErr{err}
		}
		// One line, never a stack trace.
		fmt.Fprintln(stderr, "crawltrace: "+errorLine(c, err))
	}
	return exitCode(err)
}

// oneLine folds an error message onto one line.
func oneLine(msg string) string { return strings.ReplaceAll(strings.TrimSpace(msg), "\n", " ") }

// progressEvery and progressNow, when set (by tests), replace the batch
// interval and the clock of progress lines.
var (
	progressEvery time.Duration
	progressNow   func() time.Time
)

// progressOut returns where cmd's progress lines go under --progress: a
// *progress.Sink on stderr, or nil for none.
func progressOut(cmd *cobra.Command) io.Writer {
	v, _ := cmd.Flags().GetString("progress")
	m, err := progress.ParseMode(v)
	if err != nil {
		m = progress.Auto
	}
	stderr := cmd.ErrOrStderr()
	f, ok := stderr.(*os.File)
	s := progress.NewSink(m, stderr, ok && term.IsTerminal(int(f.Fd())))
	if s == nil {
		return nil // not a typed nil in the interface
	}
	s.Every, s.Now = progressEvery, progressNow
	return s
}

// deprecate hides flag old, an alias kept for scripts; using it prints a
// one-line notice on stderr naming the new flag (pflag's own notice would
// go to stdout, among a command's results).
func deprecate(f *pflag.FlagSet, old, replacement string) {
	if err := f.MarkHidden(old); err != nil {
		panic(err) // a programming error: no such flag
	}
	f.SetAnnotation(old, replacedBy, []string{replacement})
}

// alias adds old as a hidden, deprecated second name of flag name: set
// through either, read through name (its Changed included). The README's
// "Changes" section lists every alias.
func alias(f *pflag.FlagSet, old, name string) {
	fl := f.Lookup(name)
	f.AddFlag(&pflag.Flag{Name: old, Value: fl.Value, DefValue: fl.DefValue, NoOptDefVal: fl.NoOptDefVal, Usage: fl.Usage})
	deprecate(f, old, name)
}

// replacedBy is the annotation deprecate puts on an alias.
const replacedBy = "crawltrace-replaced-by"

// noteDeprecated prints the notice of every deprecated alias c was given.
func noteDeprecated(c *cobra.Command) {
	c.Flags().Visit(func(fl *pflag.Flag) {
		if r := fl.Annotations[replacedBy]; len(r) > 0 {
			fmt.Fprintf(c.ErrOrStderr(), "crawltrace: --%s is deprecated, use --%s\n", fl.Name, r[0])
			if nf := c.Flags().Lookup(r[0]); nf != nil && nf.Value == fl.Value {
				nf.Changed = true
			}
		}
	})
}
