package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite README.md's example demo output from a demo run")

// readmeWallTime is the only wall-clock figure of the demo's output.
var readmeWallTime = regexp.MustCompile(`\(\d+\.\ds here\)`)

// readmeDemoBlock is the demo's output as README.md shows it: every line
// (stderr first), the output directory named demo-out, the list of files
// cut to its first five and last three.
func readmeDemoBlock(out, dir string) string {
	var lines, files []string
	for _, l := range strings.Split(strings.TrimRight(strings.ReplaceAll(out, dir, "demo-out"), "\n"), "\n") {
		if strings.HasPrefix(l, "  demo-out/") {
			files = append(files, l)
			continue
		}
		if len(files) > 0 {
			if len(files) > 8 {
				files = append(append(files[:5:5], "  ..."), files[len(files)-3:]...)
			}
			lines = append(lines, files...)
			files = nil
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n") + "\n"
}

// README.md's example output of `go run ./cmd/crawltrace demo` is the
// output of the deterministic demo with the default flags, line for line
// but for the wall-clock time the crawl took (`-update-readme` rewrites
// it from a run). The default demo takes 15 s of CPU: it is in the long
// tier (.ci/run runs it; -tags long -update-readme rewrites README.md).
func TestREADMEDemoOutput(t *testing.T) {
	longOnly(t)
	childProcesses(t, "runs the default demo")
	_, shown := firstContact(t)
	dir := filepath.Join(t.TempDir(), "demo-out")
	cmd := crawltest.Command(cliChild, "demo", "--out", dir, "--progress", "never")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	got := readmeDemoBlock(stderr.String()+stdout.String(), dir)
	const prompt = "$ go run ./cmd/crawltrace demo\n"
	pre, body, ok := strings.Cut(shown, prompt)
	if !ok {
		t.Fatalf("README.md's demo output does not start with %q", prompt)
	}
	if *updateREADME {
		path := filepath.Join("..", "..", "README.md")
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(text), shown) != 1 {
			t.Fatal("README.md's demo output is not one block")
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(text), shown, pre+prompt+got, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	mask := func(s string) string { return readmeWallTime.ReplaceAllString(s, "(WALL here)") }
	if mask(body) != mask(got) {
		t.Errorf("README.md's demo output is stale (go test ./cmd/crawltrace -run TestREADMEDemoOutput -update-readme rewrites it); a run printed:\n%s\nREADME.md shows:\n%s", got, body)
	}
}
