// Package sampledata locates the real sample files (Heritrix crawl.logs,
// WARC and WAT files) that tests read but the repository does not ship.
//
// The samples live in ../shared/data beside the module root, or wherever
// CRAWLTRACE_SAMPLES points. When they are missing, a test skips, except in
// CI (CI=true), where a missing sample fails the test so that a CI without
// the samples cannot pass silently.
package sampledata

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// EnvDir names the environment variable that overrides the sample
// directory.
const EnvDir = "CRAWLTRACE_SAMPLES"

// Dir returns the sample directory: $CRAWLTRACE_SAMPLES, or ../shared/data
// relative to the module root.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("..", "shared", "data")
	}
	// file is <root>/internal/sampledata/sampledata.go.
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	return filepath.Join(filepath.Dir(root), "shared", "data")
}

// InCI reports whether the tests run in CI (CI=true), where missing
// samples are an error.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test for a tool or package it needs and does not
// find (msg says what and how to get it), or fails it in CI, where
// .ci/run installs every such tool.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if InCI() {
		t.Fatal(msg + " in CI (CI=true)")
	}
	t.Skip(msg)
}

// CacheDir is where .ci/ installs a tool the tests run (an npm prefix):
// the environment variable env when set, else crawltrace/name in the user
// cache directory.
func CacheDir(env, name string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		c = os.TempDir()
	}
	return filepath.Join(c, "crawltrace", name)
}

// NodePackage finds node on PATH and the npm package pkg that .ci/name
// installs under CacheDir(env, name), and returns node's path and that
// prefix. When either is missing the test is skipped, or failed in CI;
// tool names what is missing in the message.
func NodePackage(t testing.TB, tool, env, name, pkg string) (node, dir string) {
	t.Helper()
	miss := func(what string) {
		t.Helper()
		Missing(t, fmt.Sprintf("%s not available: %s (run .ci/%s, or set %s to an npm prefix holding %s)", tool, what, name, env, pkg))
	}
	node, err := exec.LookPath("node")
	if err != nil {
		miss("no node on PATH")
	}
	dir = CacheDir(env, name)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		miss(fmt.Sprintf("no %s under %s", pkg, dir))
	}
	return node, dir
}

// Path returns the sample file Dir()/parts. When it does not exist the test
// is skipped, or failed in CI.
func Path(t testing.TB, parts ...string) string {
	t.Helper()
	p, ok := Optional(t, parts...) // fails the test in CI
	if !ok && !InCI() {
		t.Skipf("sample %s not available (set %s)", p, EnvDir)
	}
	return p
}

// Optional returns the sample file Dir()/parts and whether it exists, for
// tests that check a sample only when it is there. In CI a missing sample
// fails the test.
func Optional(t testing.TB, parts ...string) (string, bool) {
	t.Helper()
	p := filepath.Join(append([]string{Dir()}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		if InCI() {
			t.Fatalf("sample %s missing in CI (CI=true; set %s or provide ../shared/data): %v", p, EnvDir, err)
		}
		return p, false
	}
	return p, true
}

// Installed returns dir, a directory a system package installs (for
// example Debian's postgresql-doc-15 HTML tree), for tests that read real
// data the repository does not ship. When it is missing the test is
// skipped, or failed in CI, where .ci/run installs the package first.
func Installed(t testing.TB, dir, pkg string) string {
	t.Helper()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if InCI() {
			t.Fatalf("%s missing in CI (CI=true): install package %s (.ci/run does)", dir, pkg)
			return dir
		}
		t.Skipf("%s not available: install package %s", dir, pkg)
	}
	return dir
}
