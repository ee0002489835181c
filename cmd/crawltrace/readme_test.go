package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
