package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

// The output rule, one for every command that writes a directory: it
// writes ./NAME-out (crawl-out, condense-out, replay-out, ...) unless -o
// names another, and refuses a directory holding another command's or an
// earlier run's outputs unless --force (package outdir). The commands that
// write one file (export, gen-trace) need -o: its extension is the
// format. The cluster steps condense reduce and condense merge work in the
// map tasks' directory.
var outDirDefaults = map[string]string{
	"crawl":                   "crawl-out",
	"condense":                "condense-out",
	"import urls":             "import-out",
	"import heritrix":         "import-out",
	"import warc":             "import-out",
	"import wat":              "import-out",
	"replay":                  "replay-out",
	"replay merge":            "replay-out",
	"scenario partition":      "scenario-out",
	"scenario splitter-cache": "scenario-out",
	"scenario threads":        "scenario-out",
	"scenario node-loss":      "scenario-out",
	"scenario locality":       "scenario-out",
	"scenario all":            "scenario-out",
	"orders":                  "orders-out",
	"demo":                    "demo-out",
}

// applyOutDefaults sets the default of each command's -o by the output
// rule; it panics on a table out of step with the commands (the tests
// build the tree).
func applyOutDefaults(root *cobra.Command) {
	left := len(outDirDefaults)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if def, ok := outDirDefaults[commandName(c)]; ok {
			f := c.Flags().Lookup("out")
			if err := f.Value.Set(def); err != nil {
				panic(err)
			}
			f.DefValue = def
			left--
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if left != 0 {
		panic("outDirDefaults names a command that does not exist")
	}
}

// commandName is c's path without the program's name: "scenario all".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), c.Root().Name()), " ")
}

// exportExts are the extensions of export's output files, lower case, and
// the format each names.
var exportExts = map[string]string{
	".parquet":       formatParquet,
	".txt":           replay.FormatText,
	".oraclegeneral": replay.FormatOracleGeneral,
	".bin":           replay.FormatOracleGeneral,
	".arrow":         replay.FormatCondensed,
}

// exportFormat is export's output format: --format when given (format,
// given), else the one -o's extension names; a directory (inDir) is
// exported to Parquet. A --format the extension contradicts is an error.
func exportFormat(format string, given bool, out string, inDir bool) (string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	byExt, known := exportExts[ext]
	switch {
	case given && known && !strings.EqualFold(format, byExt):
		return "", badInput("export: --format %s does not match -o %s (a %s file is %s): drop --format, or give -o a name ending in %s",
			format, out, ext, byExt, extsOf(format))
	case given:
		return format, nil
	case known:
		return byExt, nil
	case inDir:
		return formatParquet, nil
	}
	return "", badInput("export: cannot tell the output format from -o %s: end its name in .parquet, .txt, .oracleGeneral or .bin, or give --format", out)
}

// extsOf lists the extensions that name format, for a message.
func extsOf(format string) string {
	var exts []string
	for ext, f := range exportExts {
		if strings.EqualFold(f, format) {
			exts = append(exts, ext)
		}
	}
	if len(exts) == 0 {
		return "its format's extension"
	}
	slices.Sort(exts)
	return strings.Join(exts, " or ")
}

// cobra's argument-count errors, and how they are said instead.
var argCounts = []struct {
	re  *regexp.Regexp
	say func(m []string) string
}{
	{regexp.MustCompile(`^accepts (\d+) arg\(s\), received (\d+)$`),
		func(m []string) string { return "takes " + m[1] + " " + plural(m[1], "argument") + ", got " + m[2] }},
	{regexp.MustCompile(`^requires at least (\d+) arg\(s\), only received (\d+)$`),
		func(m []string) string {
			return "needs at least " + m[1] + " " + plural(m[1], "argument") + ", got " + m[2]
		}},
	{regexp.MustCompile(`^accepts at most (\d+) arg\(s\), received (\d+)$`),
		func(m []string) string {
			return "takes at most " + m[1] + " " + plural(m[1], "argument") + ", got " + m[2]
		}},
	{regexp.MustCompile(`^accepts between (\d+) and (\d+) arg\(s\), received (\d+)$`),
		func(m []string) string { return "takes " + m[1] + " to " + m[2] + " arguments, got " + m[3] }},
}

var (
	unknownRE  = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-{1,2}([^' ]+)'?`)
	badValueRE = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w-]+)" flag: (?:strconv\.\w+: parsing "[^"]*": )?(.*)$`)
)

// argCountErr rewrites cobra's argument-count errors for command c into
// one line naming the command, what it takes and its usage: "replay:
// needs at least 1 argument, got 0; usage: crawltrace replay TRACE...
// [flags] (crawltrace help replay)". Other errors come back unchanged.
func argCountErr(c *cobra.Command, err error) error {
	for _, a := range argCounts {
		if m := a.re.FindStringSubmatch(err.Error()); m != nil {
			name := commandName(c)
			return usageErr{fmt.Errorf("%s: %s; usage: %s (crawltrace help %s)", name, a.say(m), c.UseLine(), name)}
		}
	}
	return err
}

func plural(n, word string) string {
	if n == "1" {
		return word
	}
	return word + "s"
}

// flagErr rewrites a flag error of command c: an unknown flag suggests the
// nearest one c takes, and a value that does not parse says what the flag
// takes, without strconv's words.
func flagErr(c *cobra.Command, err error) error {
	msg := err.Error()
	if m := unknownRE.FindStringSubmatch(msg); m != nil {
		if near := nearestFlag(c, m[1]); near != "" {
			return fmt.Errorf("%s (did you mean --%s?)", msg, near)
		}
		return fmt.Errorf("%s (%s lists the flags)", msg, strings.TrimSpace("crawltrace help "+commandName(c)))
	}
	if m := badValueRE.FindStringSubmatch(msg); m != nil {
		f := c.Flags().Lookup(m[2])
		if f == nil {
			return err
		}
		kind := map[string]string{"int": "a whole number", "int64": "a whole number", "uint64": "a whole number >= 0",
			"float64": "a number", "duration": "a duration such as 30s or 5m", "bool": "true or false",
			"intSlice": "comma-separated whole numbers"}[f.Value.Type()]
		if kind == "" {
			return err
		}
		hint := ""
		if (m[2] == "seed" || m[2] == "order-seed") && c.Flags().Lookup("seeds") != nil {
			hint = "; for a file of seed URLs use --seeds FILE"
		}
		return fmt.Errorf("--%s %q: takes %s (%s)%s", m[2], m[1], kind, f.Usage, hint)
	}
	return err
}

// nearestFlag is the name of the flag of c (its own and inherited, not
// hidden) nearest to name: one it begins, or that begins it, or at most
// two edits away; "" when none is.
func nearestFlag(c *cobra.Command, name string) string {
	best, bestD := "", 3
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// errorLine is the one line an error of command c is reported in, after
// "crawltrace: ": the command's name first ("replay: ..."), once, then the
// error, without the words of the markers that set the exit status ("bad
// input"), which say nothing to the user.
func errorLine(c *cobra.Command, err error) string {
	msg := strings.ReplaceAll(oneLine(err.Error()), tracefile.ErrBadInput.Error()+": ", "")
	name := ""
	if c != nil {
		name = commandName(c)
	}
	if name == "" {
		return msg
	}
	first, _, _ := strings.Cut(name, " ")
	if !strings.HasPrefix(msg, first+": ") && !strings.HasPrefix(msg, name+": ") {
		msg = name + ": " + msg
	}
	// "replay: --sizes: replay: size ..." says the command once.
	head, rest, _ := strings.Cut(msg, ": ")
	return head + ": " + strings.ReplaceAll(rest, head+": ", "")
}

// parseMemory reads a --memory budget as every command does: a size
// ([parseBytes]: 4gb, 4GB, 4GiB alike) or auto, what the machine has
// available now. (replay's --memory also takes off, for no check, and
// leaves auto to the run.)
func parseMemory(s string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		if n := procmem.Available(); n > 0 {
			return n, nil
		}
		return 0, fmt.Errorf("auto: the available memory cannot be read here; give a size, e.g. 4GiB")
	}
	return parseBytes(s)
}
