package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/progress"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/replay"
	"github.com/crawltrace/crawltrace/replay/policy"
	"github.com/crawltrace/crawltrace/replay/scenario"
)

// flagValues is what shell completion offers for flags that take one of a
// few names, by command path ("" for the root's persistent flags) and
// flag. A list flag (comma-separated) completes its last element.
type flagValues struct {
	vals []string
	list bool
}

func one(vals ...string) flagValues  { return flagValues{vals: vals} }
func list(vals ...string) flagValues { return flagValues{vals: vals, list: true} }

func completions() map[string]map[string]flagValues {
	online := slices.DeleteFunc(policy.Names(), func(p string) bool { return p == "min" || p == "static" })
	partitioners := partition.Names()
	streamOrder := one(scenario.OrderTime, scenario.OrderNode)
	quality := one("pagerank", "zipf")
	sizes := one() // a list of numbers: nothing to offer, and no files
	imp := map[string]flagValues{"partitioner": one(partitioners...)}
	return map[string]map[string]flagValues{
		"": {"progress": one(progress.Modes()...)},
		"crawl": {"partitioner": one(partitioners...), "order": one(recorder.Orders()...),
			"compression": one("none", "zstd", "lz4")},
		"replay":                  {"policies": list(policy.Names()...), "in-format": one(replay.Formats()...), "algorithm": one(replay.Algorithms()...), "sizes": sizes},
		"export":                  {"format": one(append(replay.Formats(), formatParquet)...), "in-format": one(replay.Formats()...)},
		"demo":                    {"policies": list(policy.Names()...), "sizes": sizes},
		"orders":                  {"orders": list(recorder.Orders()...), "quality-model": quality},
		"testweb":                 {"quality-model": quality},
		"import urls":             imp,
		"import heritrix":         imp,
		"import warc":             imp,
		"import wat":              imp,
		"scenario partition":      {"partitioners": list(partitioners...), "stream-order": streamOrder},
		"scenario splitter-cache": {"policies": list(online...), "sizes": sizes},
		"scenario threads":        {"sizes": sizes},
		"scenario locality":       {"sizes": sizes},
		"scenario node-loss":      {"partitioners": list(partitioners...), "stream-order": streamOrder, "event": one(scenario.EventRemove, scenario.EventAdd)},
		"scenario all":            {"stream-order": streamOrder},
	}
}

// complete returns the completion function of v.
func (v flagValues) complete(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	prefix, last := "", toComplete
	if v.list {
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			prefix, last = toComplete[:i+1], toComplete[i+1:]
		}
	}
	var out []string
	for _, s := range v.vals {
		if strings.HasPrefix(s, last) {
			out = append(out, prefix+s)
		}
	}
	d := cobra.ShellCompDirectiveNoFileComp
	if v.list {
		d |= cobra.ShellCompDirectiveNoSpace
	}
	return out, d
}

// pathArgs is how the path arguments of a command complete: directories
// only (a crawl directory) or any file or directory (traces).
var pathArgs = map[string]cobra.ShellCompDirective{
	"condense": cobra.ShellCompDirectiveFilterDirs,
	"replay":   cobra.ShellCompDirectiveDefault,
}

// completeArgs completes the arguments of a command with subcommands:
// cobra offers the subcommands' names that match; when none does, paths
// (directive).
func completeArgs(directive cobra.ShellCompDirective) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 && toComplete != "" {
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() && strings.HasPrefix(s.Name(), toComplete) {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
			}
		}
		return nil, directive
	}
}

// registerCompletions registers the value completion of every flag in
// completions, and of the path arguments in pathArgs, on the command tree
// under root.
func registerCompletions(root *cobra.Command) error {
	table := completions()
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if d, ok := pathArgs[path]; ok {
			c.ValidArgsFunction = completeArgs(d)
		}
		for flag, v := range table[path] {
			if err := c.RegisterFlagCompletionFunc(flag, v.complete); err != nil {
				return err
			}
		}
		delete(table, path)
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return err
	}
	for path := range table {
		return fmt.Errorf("completion: no command %q", path)
	}
	return nil
}
