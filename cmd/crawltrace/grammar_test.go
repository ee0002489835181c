package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagMeanings gives the one meaning of every flag name that more than
// one command takes: each such flag's help says it. A name with two
// meanings needs a new name for one of them, the old one kept as a hidden
// alias (see alias).
var flagMeanings = map[string]string{
	"out":            "output",
	"force":          "replace",
	"memory":         "memory",
	"jobs":           "parallel jobs",
	"workers":        "fetch workers",
	"nodes":          "crawler node",
	"hosts":          "hosts of the",
	"pages-per-host": "pages per host of the",
	"web-seed":       "seed of the",
	"max-pages":      "budget of fetches",
	"max-conns":      "connections open at once",
	"duration":       "after this long",
	"listen":         "listen address",
	"sizes":          "cache sizes",
	"policies":       "policies",
	"partitioner":    "partitioner",
	"partitioners":   "partitioners",
	"replicas":       "consistent",
	"crawl-id":       "crawl id",
	"strict":         "cut segment",
	"no-plots":       "do not draw figures",
	"shard":          "of a cluster run",
	"temp-dir":       "where to",
	"in-format":      "input format",
	"stream-order":   "stream order",
	"quality-model":  "quality model",
	"charge-static":  "STATIC",
	"framing-bytes":  "bytes added per",
	"raw":            "as given",
	"latency-median": "median of the hosts' mean response times",
}

// commandFlags calls fn with every command under root and each of its own
// flags.
func commandFlags(root *cobra.Command, fn func(c *cobra.Command, f *pflag.Flag)) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { fn(c, f) })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// One name, one meaning: a flag name taken by several commands means the
// same in each (its help says flagMeanings' words), unless it is a hidden
// alias of a renamed flag, which README.md's changes list.
func TestOneMeaningPerFlagName(t *testing.T) {
	root := newRootCmd()
	users := map[string][]string{}
	commandFlags(root, func(c *cobra.Command, f *pflag.Flag) {
		if len(f.Annotations[replacedBy]) > 0 || c.Name() == "help" || c.Name() == "completion" || f.Name == "help" {
			return
		}
		users[f.Name] = append(users[f.Name], c.CommandPath())
	})
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	commandFlags(root, func(c *cobra.Command, f *pflag.Flag) {
		if r := f.Annotations[replacedBy]; len(r) > 0 {
			if c.Flags().Lookup(r[0]) == nil {
				t.Errorf("%s: --%s is an alias of --%s, which it does not have", c.CommandPath(), f.Name, r[0])
			}
			_, changes, _ := strings.Cut(string(readme), "## Changes")
			listed := slices.ContainsFunc(strings.Split(changes, "\n"), func(l string) bool {
				return strings.Contains(l, "`--"+f.Name+"`") && strings.Contains(l, "`--"+r[0]+"`")
			})
			if !listed {
				t.Errorf("%s: the alias --%s of --%s is not in README.md's changes", c.CommandPath(), f.Name, r[0])
			}
			return
		}
		if len(users[f.Name]) < 2 {
			return
		}
		m, ok := flagMeanings[f.Name]
		if !ok {
			t.Errorf("--%s is taken by %v: give it one meaning in flagMeanings, or rename all but one", f.Name, users[f.Name])
			return
		}
		if !strings.Contains(f.Usage, m) {
			t.Errorf("%s --%s: %q does not say its meaning %q", c.CommandPath(), f.Name, f.Usage, m)
		}
	})
	for name := range flagMeanings {
		if len(users[name]) < 2 {
			t.Errorf("flagMeanings lists --%s, which %d command(s) take", name, len(users[name]))
		}
	}
	// The names the issue found with two meanings each.
	for _, name := range []string{"seed", "order", "format", "pages", "workers"} {
		var paths []string
		commandFlags(root, func(c *cobra.Command, f *pflag.Flag) {
			if f.Name == name && len(f.Annotations[replacedBy]) == 0 {
				paths = append(paths, c.CommandPath())
			}
		})
		if name == "workers" {
			paths = slices.DeleteFunc(paths, func(p string) bool {
				return slices.Contains([]string{"crawltrace crawl", "crawltrace demo", "crawltrace orders", "crawltrace scenario threads"}, p)
			})
		}
		if len(paths) > 1 {
			t.Errorf("--%s is still taken by %v", name, paths)
		}
	}
}

// Every message of issue 33's table names the command first and says what
// to do, in one line, with exit status 2.
func TestErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	crawl, cond := filepath.Join(dir, "crawl"), filepath.Join(dir, "condensed")
	mustRun(t, "import", "urls", "../../examples/urls.txt", "-o", crawl)
	mustRun(t, "condense", crawl, "-o", cond)
	segs, _ := filepath.Glob(filepath.Join(crawl, "node-000", "urls-*.arrows"))
	if len(segs) == 0 {
		t.Fatal("no raw segment")
	}
	trace := filepath.Join(cond, "node-000.full.arrow")
	for _, tc := range []struct {
		args []string
		want []string // in the message, in order
	}{
		{[]string{"replay"}, []string{"replay: needs at least 1 argument, got 0", "usage: crawltrace replay TRACE..."}},
		{[]string{"condense", crawl, "extra", "-o", filepath.Join(dir, "x")}, []string{"condense: takes 1 argument, got 2", "usage: crawltrace condense"}},
		{[]string{"replay", crawl, "-o", filepath.Join(dir, "r1")}, []string{"replay: ", "raw crawl directory", "condense it first", "crawltrace condense " + crawl}},
		{[]string{"replay", segs[0], "-o", filepath.Join(dir, "r2")}, []string{"replay: ", "raw URL log segment", "condense its crawl directory first"}},
		{[]string{"replay", trace, "--sizes", "2^0..2^30", "-o", filepath.Join(dir, "r3")}, []string{"replay: --sizes: ", "1073741824", "give sizes up to 2^29"}},
		{[]string{"replay", trace, "--size", "16"}, []string{"replay: unknown flag: --size", "did you mean --sizes?"}},
		{[]string{"crawl", "--seed", "seeds.txt"}, []string{"crawl: --seed \"seeds.txt\": takes a whole number", "use --seeds FILE"}},
		{[]string{"export", trace, "--format", "text", "-o", filepath.Join(dir, "out.parquet")}, []string{"export: --format text does not match -o", "drop --format, or give -o a name ending in .txt"}},
		{[]string{"export", trace, "-o", filepath.Join(dir, "out.csv")}, []string{"export: cannot tell the output format", "end its name in .parquet"}},
		{[]string{"crawl", "-o", filepath.Join(dir, "c"), "--max-redirects", "-1", "http://a.test/"}, []string{"crawl: ", "max redirects"}},
		{[]string{"inspect", filepath.Join(dir, "missing")}, []string{"inspect: ", "missing"}},
		{[]string{"replay", filepath.Join(dir, "missing")}, []string{"replay: ", "missing"}},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		line := strings.TrimSuffix(stderr, "\n")
		if code != 2 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "crawltrace: "+tc.args[0]+" ") && !strings.HasPrefix(line, "crawltrace: "+tc.args[0]+":") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming the command", tc.args, code, stderr)
			continue
		}
		rest := line
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%v: %q lacks %q", tc.args, line, w)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, bad := range []string{"bad input", "corrupt", "strconv", "arg(s)"} {
			if strings.Contains(line, bad) {
				t.Errorf("%v: %q says %q", tc.args, line, bad)
			}
		}
	}
	// The replay that --sizes refused wrote nothing.
	if _, err := os.Stat(filepath.Join(dir, "r3")); err == nil {
		t.Error("replay --sizes 2^0..2^30 made its output directory")
	}
}

// Bash completion offers paths for the arguments of condense (directories)
// and replay (files), subcommands while one matches, and nothing (no
// files) for --sizes.
func TestPathCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // completions, then the directive
	}{
		{[]string{"condense", "run/cr"}, ":16"}, // ShellCompDirectiveFilterDirs
		{[]string{"replay", "run/condensed/"}, ":0"},
		{[]string{"condense", "me"}, "merge\tCombine"},
		{[]string{"replay", "x", "--sizes", ""}, ":4"}, // ShellCompDirectiveNoFileComp
		{[]string{"demo", "--sizes", "2"}, ":4"},
		{[]string{"scenario", "threads", "x", "--sizes", ""}, ":4"},
	} {
		_, out, _ := runCLI(t, append([]string{"__complete"}, tc.args...)...)
		if !strings.HasPrefix(out, tc.want) {
			t.Errorf("complete %v = %q, want it to begin %q", tc.args, out, tc.want)
		}
	}
}

// --memory reads the same sizes in every command, in any case, and auto.
func TestMemoryParsedAlike(t *testing.T) {
	for _, s := range []string{"4gb", "4GB", "4GiB", "4g", "4G", "4096MiB", "4294967296"} {
		n, err := parseMemory(s)
		if err != nil || n != 4<<30 {
			t.Errorf("parseMemory(%q) = %d, %v; want %d", s, n, err, int64(4<<30))
		}
		if r, err := parseMemoryFlag(s); err != nil || r != n {
			t.Errorf("replay --memory %q = %d, %v; want %d", s, r, err, n)
		}
	}
	if n, err := parseMemory("auto"); err != nil || n <= 0 {
		t.Errorf("parseMemory(auto) = %d, %v", n, err)
	}
	for _, s := range []string{"", "lots", "-1G", "0"} {
		if _, err := parseMemory(s); err == nil {
			t.Errorf("parseMemory(%q) took it", s)
		}
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"condense", filepath.Join(dir, "missing"), "-o", filepath.Join(dir, "o1"), "--memory", "4gb"},
		{"condense", filepath.Join(dir, "missing"), "-o", filepath.Join(dir, "o2"), "--memory", "auto"},
	} {
		if _, _, errs := runCLI(t, args...); strings.Contains(errs, "--memory") {
			t.Errorf("%v: %s", args, errs)
		}
	}
}

// export's format follows -o's extension; --format must agree with it.
func TestExportFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		given  bool
		out    string
		dir    bool
		want   string // "" for an error
	}{
		{"", false, "out.parquet", false, "parquet"},
		{"", false, "out.PARQUET", false, "parquet"},
		{"", false, "out.txt", false, "text"},
		{"", false, "out.oracleGeneral", false, "oracleGeneral"},
		{"", false, "out.bin", false, "oracleGeneral"},
		{"", false, "out.arrow", false, "condensed"},
		{"", false, "run/parquet/crawl", true, "parquet"},
		{"", false, "out.csv", false, ""},
		{"", false, "out", false, ""},
		{"text", true, "out.parquet", false, ""},
		{"oracleGeneral", true, "out.txt", false, ""},
		{"parquet", true, "out.parquet", false, "parquet"},
		{"oracleGeneral", true, "out.trace", false, "oracleGeneral"},
		{"parquet", true, "run/parquet/crawl", true, "parquet"},
	} {
		got, err := exportFormat(tc.format, tc.given, tc.out, tc.dir)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("exportFormat(%q, %v, %q, %v) = %q, %v; want %q", tc.format, tc.given, tc.out, tc.dir, got, err, tc.want)
		}
	}
}
