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
	imp := map[string]flagValues{"partitioner": one(partitioners...)}
	return map[string]map[string]flagValues{
		"": {"progress": one(progress.Modes()...)},
		"crawl": {"partitioner": one(partitioners...), "order": one(recorder.Orders()...),
			"compression": one("none", "zstd", "lz4")},
		"replay":                  {"policies": list(policy.Names()...), "format": one(replay.Formats()...), "algorithm": one(replay.Algorithms()...)},
		"export":                  {"format": one(replay.Formats()...), "in-format": one(replay.Formats()...)},
		"demo":                    {"policies": list(policy.Names()...)},
		"orders":                  {"orders": list(recorder.Orders()...), "quality-model": quality},
		"testweb":                 {"quality": quality},
		"import urls":             imp,
		"import heritrix":         imp,
		"import warc":             imp,
		"import wat":              imp,
		"scenario partition":      {"partitioners": list(partitioners...), "order": streamOrder},
		"scenario splitter-cache": {"policies": list(online...)},
		"scenario node-loss":      {"partitioners": list(partitioners...), "order": streamOrder, "event": one(scenario.EventRemove, scenario.EventAdd)},
		"scenario all":            {"order": streamOrder},
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

// registerCompletions registers the value completion of every flag in
// completions on the command tree under root.
func registerCompletions(root *cobra.Command) error {
	table := completions()
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
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
