package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = runWith(args, &o, &e)
	return code, o.String(), e.String()
}

// Bad input: one line naming the file and the problem, exit status 2, no
// panic, no partial output left looking complete.
func TestBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.arrow")
	os.WriteFile(junk, []byte("definitely not arrow"), 0o644)
	emptyDir := filepath.Join(dir, "empty")
	os.Mkdir(emptyDir, 0o755)
	badCrawl := filepath.Join(dir, "bad")
	os.MkdirAll(filepath.Join(badCrawl, "node-000"), 0o755)
	os.WriteFile(filepath.Join(badCrawl, "node-000", "urls-000001.arrows"), []byte("garbage bytes here"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", junk}, "junk.arrow"},
		{[]string{"inspect", filepath.Join(dir, "missing")}, "missing"},
		{[]string{"condense", emptyDir, "-o", filepath.Join(dir, "o1")}, "empty"},
		{[]string{"condense", badCrawl, "-o", filepath.Join(dir, "o2")}, "urls-000001.arrows"},
		{[]string{"condense", filepath.Join(dir, "nope"), "-o", filepath.Join(dir, "o3")}, "nope"},
		{[]string{"condense", badCrawl, "-o", dir, "--memory", "lots"}, "--memory"},
		{[]string{"import", "urls", filepath.Join(dir, "nofile.txt"), "-o", filepath.Join(dir, "o4")}, "nofile.txt"},
		{[]string{"import", "urls", junk, "-o", filepath.Join(dir, "o5")}, "no URLs"},
		{[]string{"condense", "merge", emptyDir}, "report-shard"},
		{[]string{"nosuchcommand"}, "unknown command"},
		{[]string{"condense", "--no-such-flag", "x"}, "no-such-flag"},
		{[]string{"crawl", "-o", filepath.Join(dir, "c1"), "--politeness-key", "dns", "http://a.test/"}, `politeness key "dns"`},
		{[]string{"crawl", "-o", filepath.Join(dir, "c2"), "--max-redirects", "-1", "http://a.test/"}, "max redirects"},
		{[]string{"crawl", "-o", filepath.Join(dir, "c3"), "--ca-file", junk, "http://a.test/"}, "CA file " + junk + ": no PEM certificate"},
		{[]string{"crawl", "-o", filepath.Join(dir, "c4"), "--ca-file", filepath.Join(dir, "noca.pem"), "http://a.test/"}, "noca.pem"},
		{[]string{"crawl", "-o", filepath.Join(dir, "c5"), "--resolve", "a.test:0:127.0.0.1", "http://a.test/"}, `bad port "0"`},
		{[]string{"testweb", "--ca-out", filepath.Join(dir, "ca.pem")}, "--ca-out needs --tls-listen"},
		{[]string{"testweb", "--hostile", "--tls-listen", "127.0.0.1:0"}, "not served with --hostile"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "crawltrace: ") {
			t.Errorf("%v: stderr %q, want one line mentioning %q", tc.args, stderr, tc.want)
		}
		if strings.Contains(stderr, "goroutine") {
			t.Errorf("%v: stack trace", tc.args)
		}
	}
	for _, o := range []string{"o2", "o4", "o5"} {
		if _, err := os.Stat(filepath.Join(dir, o, "report.json")); err == nil {
			t.Errorf("%s: report written by a failed run", o)
		}
		if _, err := os.Stat(filepath.Join(dir, o, "manifest.json")); err == nil {
			t.Errorf("%s: manifest written by a failed run", o)
		}
	}
}

// The README's quick start: import -> condense -> inspect on the shipped example.
func TestQuickStart(t *testing.T) {
	dir := t.TempDir()
	crawl, cond := filepath.Join(dir, "crawl"), filepath.Join(dir, "condensed")
	code, out, errs := runCLI(t, "import", "urls", "../../examples/urls.txt", "--nodes", "2", "-o", crawl)
	if code != 0 || !strings.Contains(out, "imported 300 URLs") || !strings.Contains(out, "2 bad lines") {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "condense", crawl, "-o", cond)
	if code != 0 || !strings.Contains(out, "74 distinct URLs") || !strings.Contains(out, "no fingerprint collisions") {
		t.Fatalf("condense: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "inspect", filepath.Join(cond, "node-000.full.arrow"), "-n", "2")
	if code != 0 || !strings.Contains(out, "300 fingerprints") || !strings.Contains(out, "subtrace full") {
		t.Fatalf("inspect: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "crawltrace ") {
		t.Fatalf("version: %q", out)
	}
}

// Collisions are a finding: exit 0 and printed, unless --fail-on-collision.
func TestCondenseCollisionsCLI(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "crawl")
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		b.WriteString("http://h.test/p/")
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("/")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("\n")
	}
	os.WriteFile(filepath.Join(dir, "u.txt"), []byte(b.String()), 0o644)
	if code, _, e := runCLI(t, "import", "urls", filepath.Join(dir, "u.txt"), "-o", crawl); code != 0 {
		t.Fatal(e)
	}
	code, _, errs := runCLI(t, "condense", crawl, "-o", filepath.Join(dir, "c1"), "--bits", "12")
	if code != 0 || !strings.Contains(errs, "FINGERPRINT COLLISIONS") {
		t.Fatalf("collisions: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "condense", crawl, "-o", filepath.Join(dir, "c2"), "--bits", "12", "--fail-on-collision")
	if code == 0 || !strings.Contains(errs, "collision") {
		t.Fatalf("--fail-on-collision: exit %d, stderr %q", code, errs)
	}
}
