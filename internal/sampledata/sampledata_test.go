package sampledata

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fakeTB records what Path and Optional do with a missing sample.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Skip(...any)           { f.skipped = true }
func (f *fakeTB) Fatal(...any)          { f.failed = true }

func TestMissingSampleSkipsOrFailsInCI(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var f fakeTB
		Path(&f, "nope.warc.gz")
		if f.skipped == (ci == "true") || f.failed != (ci == "true") {
			t.Errorf("CI=%q: skipped %v failed %v", ci, f.skipped, f.failed)
		}
		var g fakeTB
		if _, ok := Optional(&g, "nope"); ok || g.failed != (ci == "true") || g.skipped {
			t.Errorf("Optional, CI=%q: ok %v failed %v skipped %v", ci, ok, g.failed, g.skipped)
		}
	}
}

func TestPresentSample(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	t.Setenv("CI", "true")
	os.WriteFile(filepath.Join(dir, "x.log"), []byte("x"), 0o644)
	var f fakeTB
	if p := Path(&f, "x.log"); p != filepath.Join(dir, "x.log") || f.failed || f.skipped {
		t.Errorf("Path = %s, failed %v skipped %v", p, f.failed, f.skipped)
	}
}

func TestDefaultDirIsBesideTheModule(t *testing.T) {
	t.Setenv(EnvDir, "")
	if got := Dir(); filepath.Base(got) != "data" || filepath.Base(filepath.Dir(got)) != "shared" {
		t.Errorf("Dir() = %s", got)
	}
}

func TestInstalledSkipsOrFailsInCI(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var f fakeTB
		Installed(&f, missing, "some-doc")
		if f.skipped == (ci == "true") || f.failed != (ci == "true") {
			t.Errorf("CI=%q: skipped %v failed %v", ci, f.skipped, f.failed)
		}
		var g fakeTB
		if d := Installed(&g, t.TempDir(), "some-doc"); d == "" || g.skipped || g.failed {
			t.Errorf("CI=%q: present directory: skipped %v failed %v", ci, g.skipped, g.failed)
		}
	}
}

// NodePackage skips, or fails in CI, when the package is not under the
// prefix, and finds it there when it is (given node on PATH).
func TestNodePackage(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CRAWLTRACE_TESTPKG", dir)
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var f fakeTB
		NodePackage(&f, "Pkg", "CRAWLTRACE_TESTPKG", "pkg", "@scope/pkg")
		if f.failed != (ci == "true") || !f.failed && !f.skipped {
			t.Errorf("CI=%q: missing package: skipped %v failed %v", ci, f.skipped, f.failed)
		}
	}
	t.Setenv("CI", "")
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@scope", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", "@scope", "pkg", "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, noNode := exec.LookPath("node")
	var g fakeTB
	if _, got := NodePackage(&g, "Pkg", "CRAWLTRACE_TESTPKG", "pkg", "@scope/pkg"); got != dir || g.skipped != (noNode != nil) || g.failed {
		t.Errorf("installed package: prefix %s, skipped %v failed %v (node on PATH: %v)", got, g.skipped, g.failed, noNode == nil)
	}
}
