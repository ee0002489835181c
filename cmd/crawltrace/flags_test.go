package main

import (
	"os"
	"strings"
	"testing"
)

// Errors carry the "crawltrace: " prefix exactly once; flag errors name the
// subcommand without repeating the program name.
func TestErrorPrefixOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "crawltrace: unknown flag: --bogus (crawltrace help lists the flags)\n"},
		{[]string{"condense", "--bogus"}, "crawltrace: condense: unknown flag: --bogus (crawltrace help condense lists the flags)\n"},
		{[]string{"condense", "merge", "--bogus"}, "crawltrace: condense merge: unknown flag: --bogus (crawltrace help condense merge lists the flags)\n"},
		{[]string{"replay", "x", "--size", "4"}, "crawltrace: replay: unknown flag: --size (did you mean --sizes?)\n"},
		{[]string{"replay", "x", "--sizes"}, "crawltrace: replay: flag needs an argument: --sizes\n"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	_, want, _ := runCLI(t, "version")
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || out != want || errs != "" || !strings.HasPrefix(out, "crawltrace ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0, %q", args, code, out, errs, want)
		}
	}
}

// Flag parsing: renamed flags and their deprecated aliases reach the same
// value; the global --progress is accepted before or after the subcommand.
func TestFlagParsing(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		flag, want string
	}{
		{[]string{"replay", "--random-runs", "3"}, "random-runs", "3"},
		{[]string{"replay", "--seeds", "4"}, "random-runs", "4"},
		{[]string{"replay"}, "random-runs", "1"},
		{[]string{"crawl", "--seeds", "s.txt"}, "seeds", "s.txt"},
		{[]string{"replay", "--no-plots"}, "no-plots", "true"},
		{[]string{"replay", "merge", "--no-plots"}, "no-plots", "true"},
		{[]string{"scenario", "all", "--no-plots"}, "no-plots", "true"},
		{[]string{"demo", "--no-plots"}, "no-plots", "true"},
		{[]string{"demo"}, "no-plots", "false"},
		{[]string{"demo", "--plots=false"}, "plots", "false"},
		{[]string{"demo", "--no-scenarios"}, "no-scenarios", "true"},
		{[]string{"demo", "--scenarios=false"}, "scenarios", "false"},
		{[]string{"condense", "merge", "-o", "out"}, "out", "out"},
		{[]string{"replay", "--force"}, "force", "true"},
		{[]string{"export", "--force"}, "force", "true"},
		{[]string{"import", "wat", "--force"}, "force", "true"},
		{[]string{"--progress", "never", "replay"}, "progress", "never"},
		{[]string{"replay", "--progress", "always"}, "progress", "always"},
		{[]string{"crawl"}, "progress", "auto"},
	} {
		root := newRootCmd()
		c, rest, err := root.Find(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		f := c.Flags().Lookup(tc.flag)
		if f == nil {
			t.Errorf("%v: no flag --%s", tc.args, tc.flag)
			continue
		}
		if got := f.Value.String(); got != tc.want {
			t.Errorf("%v: --%s = %q, want %q", tc.args, tc.flag, got, tc.want)
		}
	}
}

// Deprecated aliases are hidden from help and say so, on stderr, when used.
func TestDeprecatedAliases(t *testing.T) {
	for _, tc := range []struct {
		cmd      []string
		old, new string
	}{{[]string{"replay"}, "seeds", "random-runs"}, {[]string{"demo"}, "plots", "no-plots"}, {[]string{"demo"}, "scenarios", "no-scenarios"}} {
		_, help, _ := runCLI(t, append(tc.cmd, "--help")...)
		if strings.Contains(help, "--"+tc.old+" ") || !strings.Contains(help, "--"+tc.new) {
			t.Errorf("%v help shows --%s or lacks --%s:\n%s", tc.cmd, tc.old, tc.new, help)
		}
	}
	dir := t.TempDir()
	trace := dir + "/t.arrow"
	mustRun(t, "gen-trace", "-o", trace, "--requests", "2000", "--keys", "300")
	results := func(args ...string) string {
		t.Helper()
		out := dir + "/" + args[0]
		code, _, errs := runCLI(t, append([]string{"replay", trace, "--policies", "random", "--sizes", "16", "--no-plots", "--progress", "never", "-o", out}, args[1:]...)...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		b, _ := os.ReadFile(out + "/results.csv")
		return noSeconds(string(b)) + "\x00" + errs
	}
	a, b := results("a", "--random-runs", "3"), results("b", "--seeds", "3")
	ra, ea, _ := strings.Cut(a, "\x00")
	rb, eb, _ := strings.Cut(b, "\x00")
	if ra != rb || !strings.Contains(ra, ",3,") {
		t.Errorf("--seeds 3 and --random-runs 3 differ:\n%s\n%s", ra, rb)
	}
	if ea != "" || eb != "crawltrace: --seeds is deprecated, use --random-runs\n" {
		t.Errorf("notices %q, %q", ea, eb)
	}
}

// Value completion offers the names a flag takes; list flags complete
// their last element.
func TestValueCompletion(t *testing.T) {
	if completionErr != nil {
		t.Fatal(completionErr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "x", "--policies", "lru,s"}, "lru,static\nlru,sieve\nlru,s3fifo\n"},
		{[]string{"replay", "x", "--in-format", ""}, "condensed\noracleGeneral\ntext\n"},
		{[]string{"crawl", "--partitioner", "c"}, "consistent\n"},
		{[]string{"import", "urls", "--partitioner", "d"}, "domain\n"},
		{[]string{"scenario", "partition", "x", "--partitioners", "host,u"}, "host,url\n"},
		{[]string{"scenario", "splitter-cache", "x", "--policies", "m"}, ""},
		{[]string{"scenario", "all", "x", "--stream-order", ""}, "time\nnode\n"},
		{[]string{"export", "x", "--format", "t"}, "text\n"},
		{[]string{"--progress", ""}, "auto\nalways\nnever\n"},
		{[]string{"crawl", "--compression", "z"}, "zstd\n"},
	} {
		_, out, _ := runCLI(t, append([]string{"__complete"}, tc.args...)...)
		got, _, _ := strings.Cut(out, ":")
		if got != tc.want {
			t.Errorf("complete %v = %q, want %q", tc.args, got, tc.want)
		}
	}
}
