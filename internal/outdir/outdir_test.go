package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func touch(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustPrepare is Prepare, failing t on an error.
func mustPrepare(t *testing.T, dir string, opts Options) *Dir {
	t.Helper()
	d, err := Prepare(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// names lists dir without the listing files.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), listingPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestNewAndEmptyDirectories(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	for _, dir := range []string{filepath.Join(root, "new", "deep"), empty} {
		d, err := Prepare(dir, Options{Command: "replay"})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if err := d.Done(touch(t, filepath.Join(dir, "results.csv"))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	touch(t, filepath.Join(dir, "notes.txt"))
	_, err := Prepare(dir, Options{Command: "replay"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--force") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v, want a one-line refusal naming %s and --force", err, dir)
	}
	// Another command's outputs are foreign too.
	other := t.TempDir()
	d := mustPrepare(t, other, Options{Command: "condense"})
	d.Done(touch(t, filepath.Join(other, "report.json")))
	if _, err := Prepare(other, Options{Command: "replay"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("replay into condense's directory: %v", err)
	}
	// --force writes into it and removes nothing.
	d = mustPrepare(t, dir, Options{Command: "replay", Force: true})
	d.Done(touch(t, filepath.Join(dir, "results.csv")))
	if got := names(t, dir); !slices.Equal(got, []string{"notes.txt", "results.csv"}) {
		t.Fatalf("after --force: %v", got)
	}
	// ... and from then on the directory is the command's: a forced rerun
	// removes its outputs, never notes.txt.
	d = mustPrepare(t, dir, Options{Command: "replay", Force: true})
	if got := names(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Fatalf("forced rerun kept %v", got)
	}
}

// A rerun is refused; with Force the previous run's files go, stale figures
// included, and the new run's listing replaces the old one.
func TestRerunAndForce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "res")
	d := mustPrepare(t, dir, Options{Command: "replay"})
	// Reported files, a subdirectory and a file the run did not report
	// (found because it appeared during the run).
	d.Done(touch(t, filepath.Join(dir, "results.csv")), touch(t, filepath.Join(dir, "figs", "a.png")))
	touch(t, filepath.Join(dir, "full-vs-cross-node-000.png"))
	_ = d.Done()
	_, err := Prepare(dir, Options{Command: "replay"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "earlier run") {
		t.Fatalf("rerun: %v", err)
	}
	touch(t, filepath.Join(dir, "mine.txt")) // not the command's
	d = mustPrepare(t, dir, Options{Command: "replay", Force: true})
	if got := names(t, dir); !slices.Equal(got, []string{"mine.txt"}) {
		t.Fatalf("after --force: %v", got)
	}
	d.Done(touch(t, filepath.Join(dir, "results.csv")))
	if _, err := Prepare(dir, Options{Command: "replay"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("second rerun: %v", err)
	}
}

// Slices of one run share a directory; rerunning a slice, or a whole run
// over slices, is a rerun.
func TestUnits(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"task-0-of-2", "task-1-of-2"} {
		d, err := Prepare(dir, Options{Command: "replay", Unit: u})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		d.Done(touch(t, filepath.Join(dir, "results-"+u+".csv")))
	}
	if _, err := Prepare(dir, Options{Command: "replay", Unit: "task-1-of-2"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("slice rerun: %v", err)
	}
	d := mustPrepare(t, dir, Options{Command: "replay", Unit: "task-1-of-2", Force: true})
	if got := names(t, dir); !slices.Equal(got, []string{"results-task-0-of-2.csv"}) {
		t.Fatalf("forced slice rerun removed %v", got)
	}
	d.Done(touch(t, filepath.Join(dir, "results-task-1-of-2.csv")))
	if _, err := Prepare(dir, Options{Command: "replay"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("whole run over slices: %v", err)
	}
	if _, err := Prepare(dir, Options{Command: "replay", Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Fatalf("forced whole run kept %v", got)
	}
}

// A failed run that wrote nothing does not block the next one.
func TestFailedRunLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "o")
	d := mustPrepare(t, dir, Options{Command: "condense"})
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Fatalf("left %s", dir)
	}
	if _, err := Prepare(dir, Options{Command: "condense"}); err != nil {
		t.Fatal(err)
	}
}

func TestListingCannotEscape(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	victim := touch(t, filepath.Join(root, "victim"))
	touch(t, filepath.Join(dir, listingName("replay", "")))
	os.WriteFile(filepath.Join(dir, listingName("replay", "")), []byte(`{"command":"replay","files":["../victim"]}`), 0o644)
	touch(t, filepath.Join(dir, "x"))
	if _, err := Prepare(dir, Options{Command: "replay", Force: true}); err != nil {
		t.Fatal(err)
	}
	if !exists(victim) || !exists(filepath.Join(dir, "x")) {
		t.Fatal("a listing removed files outside its own")
	}
}

func TestPrepareFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "t.og")
	if err := PrepareFile("export", f, false); err != nil {
		t.Fatal(err)
	}
	touch(t, f)
	if err := PrepareFile("export", f, false); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), f) {
		t.Fatalf("existing file: %v", err)
	}
	if err := PrepareFile("export", f, true); err != nil {
		t.Fatal(err)
	}
	if err := PrepareFile("export", dir, true); !errors.Is(err, ErrRefused) {
		t.Fatalf("directory: %v", err)
	}
}

// A whole run killed before Done left outputs its listing does not name:
// what appeared after it started counts as its output.
func TestKilledRun(t *testing.T) {
	dir := t.TempDir()
	touch(t, filepath.Join(dir, "notes.txt"))
	if _, err := Prepare(dir, Options{Command: "demo", Force: true}); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, "crawl", "node-000", "urls-000001.arrows")) // then killed: no Done
	_, err := Prepare(dir, Options{Command: "demo"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "crawl") {
		t.Fatalf("rerun after a killed run: %v", err)
	}
	d := mustPrepare(t, dir, Options{Command: "demo", Force: true})
	if got := names(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Fatalf("forced rerun after a killed run kept %v", got)
	}
	d.Done(touch(t, filepath.Join(dir, "SUMMARY.md")))
}
