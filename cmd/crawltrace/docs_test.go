package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docCommands returns the command lines quoted in a Markdown file's code
// blocks (fenced or indented), block by block: lines starting with
// "crawltrace " (after an optional "$ " prompt), "\" continuations joined
// and "# ..." comments cut; and the sbatch and kubectl lines, which need a
// cluster.
func docCommands(t *testing.T, path string) (blocks [][]string, cluster []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fenced, inBlock := false, false
	var cont string
	var cmds []string
	endBlock := func() {
		if len(cmds) > 0 {
			blocks = append(blocks, cmds)
		}
		cmds, inBlock = nil, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		raw := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(raw), "```") {
			if fenced {
				endBlock()
			}
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(raw, "    ") && cont == "" {
			if strings.TrimSpace(raw) != "" && inBlock {
				endBlock()
			}
			continue
		}
		inBlock = true
		line := strings.TrimSpace(raw)
		if cont != "" {
			line = cont + " " + line
			cont = ""
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cont = strings.TrimSpace(s)
			continue
		}
		line = strings.TrimPrefix(line, "$ ")
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case strings.HasPrefix(line, "crawltrace "):
			cmds = append(cmds, line)
		case strings.HasPrefix(line, "sbatch ") || strings.Contains(line, "$(sbatch ") || strings.HasPrefix(line, "kubectl "):
			cluster = append(cluster, line)
		}
	}
	endBlock()
	return blocks, cluster
}

// docSubcommands are the commands this test runs; the others (crawl,
// testweb, demo, scenario, orders) need a network or minutes.
var docSubcommands = map[string]bool{"condense": true, "replay": true, "export": true, "inspect": true, "import": true}

// Every condense, replay, merge, export, inspect and import command line
// quoted in README.md and docs/cluster.md runs, in document order, each
// code block in a fresh temporary directory (absolute paths are moved under
// it). What a command
// needs from a step the documents leave to a cluster (the sbatch and
// kubectl lines) is made here first: a sharded condense's map and reduce
// tasks before `condense merge`, sliced replay tasks before `replay merge`.
func TestDocumentedCommandsRun(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	docTotal = 0
	for _, doc := range []string{"../../README.md", "../../docs/cluster.md"} {
		blocks, cluster := docCommands(t, doc)
		var runnable [][][]string
		n := 0
		for _, cmds := range blocks {
			var block [][]string
			for _, c := range cmds {
				args := strings.Fields(c)[1:]
				if len(args) == 0 || !docSubcommands[args[0]] {
					continue
				}
				block = append(block, args)
				n++
			}
			if len(block) > 0 {
				runnable = append(runnable, block)
			}
		}
		if doc == "../../docs/cluster.md" && (n < 3 || len(cluster) < 4) {
			t.Fatalf("%s: found only %d commands and %d cluster lines; did the format change?", doc, n, len(cluster))
		}
		t.Run(filepath.Base(doc), func(t *testing.T) {
			fixCrawl := filepath.Join(t.TempDir(), "crawl")
			mustRun(t, "import", "urls", filepath.Join(examples, "urls.txt"), "--nodes", "3", "-o", fixCrawl)
			for _, block := range runnable {
				root := t.TempDir()
				t.Chdir(root)
				if err := os.Symlink(examples, "examples"); err != nil {
					t.Fatal(err)
				}
				runDocBlock(t, root, fixCrawl, block)
			}
		})
	}
	if docTotal < 6 {
		t.Errorf("ran only %d documented commands", docTotal)
	}
}

func runDocBlock(t *testing.T, root, fixCrawl string, block [][]string) {
	t.Helper()
	for _, args := range block {
		args = append([]string(nil), args...)
		for i, a := range args {
			if filepath.IsAbs(a) {
				args[i] = filepath.Join(root, a)
			}
		}
		prepareDocCommand(t, root, fixCrawl, args)
		t.Logf("run: crawltrace %s", strings.Join(args, " "))
		docTotal++
		if code, out, errs := runCLI(t, args...); code != 0 {
			t.Errorf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
}

var docTotal int

// prepareDocCommand makes the inputs args expects but no earlier documented
// command (only a cluster job) made.
func prepareDocCommand(t *testing.T, root, fixCrawl string, args []string) {
	t.Helper()
	switch {
	case args[0] == "condense" && len(args) > 2 && args[1] == "merge":
		dir := args[2]
		if m, _ := filepath.Glob(filepath.Join(dir, "map-*")); len(m) > 0 {
			return
		}
		for i := range 2 {
			mustRun(t, "condense", fixCrawl, "-o", dir, "--shard", itoa(i)+"/2", "--memory", "16MiB")
		}
		for i := range 2 {
			mustRun(t, "condense", "reduce", dir, "--shard", itoa(i)+"/2", "--memory", "16MiB")
		}
	case args[0] == "condense" && len(args) > 1 && args[1] != "reduce":
		if _, err := os.Stat(args[1]); os.IsNotExist(err) {
			mustRun(t, "import", "urls", "examples/urls.txt", "--nodes", "2", "-o", args[1])
		}
	case args[0] == "replay" && len(args) > 2 && args[1] == "merge":
		dir := args[2]
		if m, _ := filepath.Glob(filepath.Join(dir, "results-task-*")); len(m) > 0 {
			return
		}
		cond := filepath.Join(root, ".fixture-condensed")
		if _, err := os.Stat(cond); os.IsNotExist(err) {
			mustRun(t, "condense", fixCrawl, "-o", cond)
		}
		for i := range 2 {
			mustRun(t, "replay", cond, "--sizes", "1,16,256", "--task", itoa(i)+"/2", "-o", dir, "--no-plots")
		}
	case args[0] == "export" && len(args) > 1 && filepath.Base(args[1]) == "replay":
		if _, err := os.Stat(args[1]); os.IsNotExist(err) {
			cond := filepath.Join(root, ".fixture-condensed")
			mustRun(t, "condense", fixCrawl, "-o", cond)
			mustRun(t, "replay", cond, "--sizes", "1,16", "-o", args[1], "--no-plots")
		}
	case args[0] == "replay" && len(args) > 1:
		if _, err := os.Stat(args[1]); os.IsNotExist(err) && strings.Contains(args[1], "condensed") {
			mustRun(t, "condense", fixCrawl, "-o", args[1])
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
