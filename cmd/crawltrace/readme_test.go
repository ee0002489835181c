package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/duckdbtest"
)

// readme returns README.md and its "A crawl of your own" command block.
func readme(t *testing.T) (text, ownCrawl string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text = string(b)
	_, sec, ok := strings.Cut(text, "## A crawl of your own")
	if !ok {
		t.Fatal(`README.md has no "A crawl of your own" section`)
	}
	_, rest, ok := strings.Cut(sec, "```\n")
	if !ok {
		t.Fatal(`"A crawl of your own" has no command block`)
	}
	block, _, _ := strings.Cut(rest, "```")
	return text, block
}

// The demo's running time in README.md is the one `demo --help` gives.
func TestREADMEDemoTimeMatchesHelp(t *testing.T) {
	text, _ := readme(t)
	code, help, _ := runCLI(t, "demo", "--help")
	m := regexp.MustCompile(`takes ([a-z0-9 ]+ minutes?) on a 2-core`).FindStringSubmatch(strings.Join(strings.Fields(help), " "))
	if code != 0 || m == nil {
		t.Fatalf("demo --help (exit %d) states no running time:\n%s", code, help)
	}
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "takes "+m[1]+" on a 2-core") {
		t.Errorf("README.md does not give the demo time of demo --help (%q)", m[1])
	}
}

// The README's own crawl writes the one run layout the notebooks read:
// RUN/crawl, RUN/condensed, RUN/replay, RUN/scenario.
func TestREADMEOwnCrawlRunLayout(t *testing.T) {
	_, block := readme(t)
	run := regexp.MustCompile(`crawltrace crawl -o (\S+)/crawl `).FindStringSubmatch(block)
	if run == nil {
		t.Fatalf("no `crawltrace crawl -o RUN/crawl` in:\n%s", block)
	}
	for _, want := range []string{
		"crawltrace condense " + run[1] + "/crawl -o " + run[1] + "/condensed",
		"-o " + run[1] + "/replay",
		"crawltrace scenario all " + run[1] + "/crawl -o " + run[1] + "/scenario",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("README's own crawl lacks %q:\n%s", want, block)
		}
	}
}

// firstContact returns the command lines of README.md's "The two commands"
// block, and the demo's output as the README shows it.
func firstContact(t *testing.T) (cmds []string, demoOut string) {
	t.Helper()
	text, _ := readme(t)
	_, sec, ok := strings.Cut(text, "## The two commands\n")
	if !ok {
		t.Fatal(`README.md has no "The two commands" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	blocks := strings.Split(sec, "```")
	if len(blocks) < 4 {
		t.Fatalf(`"The two commands" has no command block and demo output:\n%s`, sec)
	}
	for _, l := range strings.Split(strings.TrimSpace(blocks[1]), "\n") {
		cmds = append(cmds, strings.TrimSpace(l))
	}
	for i := 3; i < len(blocks); i += 2 {
		if strings.Contains(blocks[i], "$ "+cmds[0]+"\n") {
			demoOut = blocks[i]
		}
	}
	if demoOut == "" {
		t.Fatalf("README.md shows no output of %q", cmds[0])
	}
	return cmds, demoOut
}

// The README's two commands run as written from the module root with
// nothing but Go on PATH, as on a fresh clone: the demo (scaled down by
// flags appended to the line) prints the stages and files the README
// shows. `go test ./...` cannot run inside itself; it must be the line CI
// runs verbatim.
func TestREADMEFirstContact(t *testing.T) {
	cmds, demoOut := firstContact(t)
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/crawltrace demo" || cmds[1] != "go test ./..." {
		t.Fatalf("README's two commands are %q; this test knows how to run `go run ./cmd/crawltrace demo` and `go test ./...`", cmds)
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmds[1]) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's %q verbatim", cmds[1])
	}
	childProcesses(t, "builds and runs the demo")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "demo-out")
	args := append(strings.Fields(cmds[0])[1:],
		"--out", out, "--hosts", "20", "--pages-per-host", "30", "--max-pages", "400", "--workers", "4", "--sizes", "2^0..2^10")
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	// Only Go: PATH holds the go command's directory and nothing else; the
	// Go caches stay where they are so the dependencies are not fetched again.
	cmd.Env = []string{"PATH=" + filepath.Dir(goBin), "HOME=" + os.Getenv("HOME")}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN", "TMPDIR"} {
		if v := os.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", cmds[0], strings.Join(args[3:], " "), err, stdout.String(), stderr.String())
	}
	got := stderr.String() + stdout.String()
	for _, l := range strings.Split(demoOut, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l == "..." || l == "wrote:" || strings.HasPrefix(l, "$ "):
		case strings.HasPrefix(l, "demo-out/"):
			p := filepath.Join(out, strings.TrimPrefix(l, "demo-out/"))
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Errorf("README lists %s; the demo wrote no such file: %v", l, err)
			}
			if !strings.Contains(got, p) {
				t.Errorf("README lists %s; the demo's output does not name %s", l, p)
			}
		default:
			// The stage lines: the words before the first number.
			w := strings.Fields(strings.ReplaceAll(l, "demo-out", out))
			stem := []string{}
			for _, f := range w {
				if strings.ContainsAny(f[:1], "0123456789") {
					break
				}
				stem = append(stem, f)
			}
			if !strings.Contains(got, strings.Join(stem, " ")) {
				t.Errorf("README shows %q; the demo printed nothing like %q:\n%s", l, strings.Join(stem, " "), got)
			}
		}
	}
}

// The README's lines that read the Parquet exports work as written: the
// export line, and the DuckDB query on what it wrote (run by
// internal/duckdbtest, skipped where DuckDB is missing, except in CI).
func TestREADMEParquetLines(t *testing.T) {
	text, _ := readme(t)
	export := regexp.MustCompile("(?m)^crawltrace export (demo-out/replay) -o (demo-out/parquet/replay)$").FindStringSubmatch(text)
	query := regexp.MustCompile(`(?m)^duckdb -c "(.*)"$`).FindStringSubmatch(text)
	if export == nil || query == nil || !strings.Contains(text, "pd.read_parquet('demo-out/parquet/replay/results.parquet')") {
		t.Fatal("README.md lacks the export, DuckDB and pandas lines of the Parquet exports")
	}
	db := duckdbtest.Open(t)
	run := filepath.Join(t.TempDir(), "demo-out")
	trace := filepath.Join(t.TempDir(), "t.arrow")
	mustRun(t, "gen-trace", "-o", trace, "--requests", "5000", "--keys", "800")
	mustRun(t, "replay", trace, "--policies", "lru,min", "--sizes", "16,1024", "--no-plots", "-o", filepath.Join(run, "replay"))
	mustRun(t, "export", strings.Replace(export[1], "demo-out", run, 1), "-o", strings.Replace(export[2], "demo-out", run, 1))
	rows := db.Query(t, strings.ReplaceAll(query[1], "demo-out", run))[0]
	if len(rows) != 2 {
		t.Fatalf("%s: %d rows, want lru and min at 1024: %v", query[1], len(rows), rows)
	}
}
